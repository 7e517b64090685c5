//! One device's busy time per bin: the union of its kernels' intervals, cut at the bin
//! boundaries. Memory is bounded whatever the dump's length: intervals are merged in
//! batches, and past a limit of disjoint stretches the oldest half is settled (added
//! to its bins) and let go, as [`crate::IntervalUnion`] does. Records come roughly in
//! time order, so what is settled is long past; an interval that still starts before
//! the settled point has that part added as it is and reported as a possible
//! over-count.

/// Intervals added between merges.
const MERGE_EVERY: usize = 1 << 14;
/// Disjoint stretches held before the oldest half is settled (16 bytes each).
const LIMIT: usize = 1 << 16;

/// Bins of `bin_ns` from `from_ns`; the last one may be shorter (ends at `to_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bins {
    pub from_ns: u64,
    pub to_ns: u64,
    pub bin_ns: u64,
}

impl Bins {
    pub fn count(&self) -> usize {
        (self.to_ns.saturating_sub(self.from_ns)).div_ceil(self.bin_ns) as usize
    }

    /// The bin holding `t` (which must be in `[from, to)`).
    pub fn of(&self, t: u64) -> usize {
        ((t - self.from_ns) / self.bin_ns) as usize
    }

    /// `[start, end)` of bin `i`.
    pub fn bounds(&self, i: usize) -> (u64, u64) {
        let start = self.from_ns + i as u64 * self.bin_ns;
        (start, (start + self.bin_ns).min(self.to_ns))
    }

    /// `[start, end)` clipped to the bins' span; `None` when nothing is left.
    pub fn clip(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let (s, e) = (start.max(self.from_ns), end.min(self.to_ns));
        (s < e).then_some((s, e))
    }

    /// Call `f(bin, overlap ns)` for each bin `[s, e)` (inside the span) overlaps.
    pub fn split(&self, s: u64, e: u64, mut f: impl FnMut(usize, u64)) {
        let mut t = s;
        while t < e {
            let i = self.of(t);
            let bin_end = self.bounds(i).1.min(e);
            f(i, bin_end - t);
            t = bin_end;
        }
    }
}

/// The busy time of one device, bin by bin.
#[derive(Debug, Clone)]
pub(super) struct DeviceBusy {
    pub busy_ns: Vec<u64>,
    merged: Vec<(u64, u64)>,
    pending: Vec<(u64, u64)>,
    settled_until: u64,
    /// Time added before `settled_until` after it was settled: possibly counted twice.
    pub late_ns: u64,
}

impl DeviceBusy {
    pub fn new(bins: usize) -> Self {
        Self {
            busy_ns: vec![0; bins],
            merged: Vec::new(),
            pending: Vec::new(),
            settled_until: 0,
            late_ns: 0,
        }
    }

    /// Add `[start, end)`, already clipped to the bins' span.
    pub fn add(&mut self, bins: &Bins, start: u64, end: u64) {
        let mut start = start;
        if start < self.settled_until {
            let late_end = end.min(self.settled_until);
            self.late_ns += late_end - start;
            self.settle(bins, start, late_end);
            start = late_end;
            if start >= end {
                return;
            }
        }
        // In order and overlapping the last one: one stretch, no entry.
        if let Some(last) = self.pending.last_mut() {
            if start >= last.0 && start <= last.1 {
                last.1 = last.1.max(end);
                return;
            }
        }
        self.pending.push((start, end));
        if self.pending.len() >= MERGE_EVERY {
            self.merge(bins, LIMIT);
        }
    }

    /// Settle everything held; the bins are final after this.
    pub fn finish(&mut self, bins: &Bins) {
        self.merge(bins, 0);
        // Only late (double-counted) time can take a bin past its length.
        for (i, b) in self.busy_ns.iter_mut().enumerate() {
            let (s, e) = bins.bounds(i);
            *b = (*b).min(e - s);
        }
    }

    fn settle(&mut self, bins: &Bins, s: u64, e: u64) {
        let busy = &mut self.busy_ns;
        bins.split(s, e, |i, ns| busy[i] += ns);
    }

    /// Merge what is pending into the held stretches; past `limit` of them, settle the
    /// oldest half (all of them for 0).
    fn merge(&mut self, bins: &Bins, limit: usize) {
        self.pending.sort_unstable();
        let in_order = match (self.merged.last(), self.pending.first()) {
            (Some(last), Some(first)) => first.0 >= last.0,
            _ => true,
        };
        let mut out = if in_order {
            // All after the held stretches' last start: append in place.
            let mut out = std::mem::take(&mut self.merged);
            for (s, e) in self.pending.drain(..) {
                match out.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => out.push((s, e)),
                }
            }
            out
        } else {
            let mut out: Vec<(u64, u64)> =
                Vec::with_capacity(self.merged.len() + self.pending.len());
            let mut a = std::mem::take(&mut self.merged).into_iter().peekable();
            let mut b = self.pending.drain(..).peekable();
            loop {
                let next = match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if x <= y => a.next(),
                    (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                    (Some(_), None) => a.next(),
                    (None, None) => break,
                };
                let (s, e) = next.expect("peeked");
                match out.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => out.push((s, e)),
                }
            }
            out
        };
        let settle = if limit == 0 {
            out.len()
        } else if out.len() > limit {
            out.len() / 2
        } else {
            0
        };
        for &(s, e) in &out[..settle] {
            self.settle(bins, s, e);
        }
        if settle > 0 {
            self.settled_until = out[settle - 1].1;
            out.drain(..settle);
        }
        self.merged = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretches_are_cut_at_bin_boundaries() {
        let bins = Bins {
            from_ns: 100,
            to_ns: 135,
            bin_ns: 10,
        };
        assert_eq!(bins.count(), 4);
        assert_eq!(bins.bounds(3), (130, 135));
        let mut d = DeviceBusy::new(4);
        d.add(&bins, 105, 112);
        d.add(&bins, 108, 115); // overlaps: counted once
        d.add(&bins, 120, 135);
        d.finish(&bins);
        assert_eq!(d.busy_ns, vec![5, 5, 10, 5]);
        assert_eq!(d.late_ns, 0);
    }

    #[test]
    fn settling_in_order_input_stays_exact() {
        // Far more stretches than the limit, in time order: nothing is lost or doubled.
        let n = 3 * LIMIT as u64 / 100 * 100;
        let bins = Bins {
            from_ns: 0,
            to_ns: n * 10,
            bin_ns: 1000,
        };
        let mut d = DeviceBusy::new(bins.count());
        for i in 0..n {
            d.add(&bins, i * 10, i * 10 + 4);
        }
        d.finish(&bins);
        assert!(d.busy_ns.iter().all(|&b| b == 400), "{:?}", &d.busy_ns[..4]);
        assert_eq!(d.late_ns, 0);
        assert!(d.merged.is_empty());
    }
}
