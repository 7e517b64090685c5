//! The length of a union of time intervals (the time a GPU was busy with any of a set
//! of kernels), in bounded memory: intervals arrive in any order, are merged in
//! batches, and once more than a limit of disjoint stretches is held the oldest half
//! is summed and let go. Records of a dump come roughly in time order, so what is let
//! go is long past; an interval that still falls before that point is counted in
//! full and its overlap with the let-go time reported as the possible error.

/// Intervals added between merges.
const MERGE_EVERY: usize = 1 << 16;
/// Disjoint stretches held before the oldest half is summed (16 bytes each).
const DEFAULT_LIMIT: usize = 1 << 19;

/// The union of half-open intervals `[start, end)` in ns.
///
/// ```
/// use cupmon_records::IntervalUnion;
/// let mut u = IntervalUnion::new();
/// u.add(0, 10);
/// u.add(5, 20); // overlaps: counted once
/// u.add(30, 40);
/// assert_eq!(u.total(), (30, 0));
/// ```
#[derive(Debug, Clone)]
pub struct IntervalUnion {
    /// Disjoint, sorted stretches at or after `settled_until`.
    merged: Vec<(u64, u64)>,
    /// Intervals added since the last merge, in arrival order.
    pending: Vec<(u64, u64)>,
    /// Length of the union before `settled_until`, summed and let go.
    settled_ns: u64,
    settled_until: u64,
    /// Time of intervals that fell before `settled_until` when they arrived: counted
    /// in `settled_ns` although part of it may already have been.
    late_ns: u64,
    limit: usize,
}

impl Default for IntervalUnion {
    fn default() -> Self {
        Self::new()
    }
}

impl IntervalUnion {
    pub fn new() -> Self {
        Self::with_limit(DEFAULT_LIMIT)
    }

    /// One that holds at most about `limit` disjoint stretches (at least 2).
    pub fn with_limit(limit: usize) -> Self {
        Self {
            merged: Vec::new(),
            pending: Vec::new(),
            settled_ns: 0,
            settled_until: 0,
            late_ns: 0,
            limit: limit.max(2),
        }
    }

    /// Add `[start, end)`; an empty or reversed interval adds nothing.
    pub fn add(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let mut start = start;
        if start < self.settled_until {
            let late = end.min(self.settled_until) - start;
            self.late_ns += late;
            self.settled_ns += late;
            start = self.settled_until;
            if end <= start {
                return;
            }
        }
        // In order and overlapping the last one (kernels of one stream back to back):
        // one stretch, no entry.
        if let Some(last) = self.pending.last_mut() {
            if start >= last.0 && start <= last.1 {
                last.1 = last.1.max(end);
                return;
            }
        }
        self.pending.push((start, end));
        if self.pending.len() >= MERGE_EVERY.min(self.limit) {
            self.merge();
        }
    }

    /// (length of the union, possible over-count) in ns: the true length lies in
    /// `[total - over, total]`; `over` is 0 unless intervals came far out of order.
    pub fn total(&mut self) -> (u64, u64) {
        self.merge();
        let held: u64 = self.merged.iter().map(|&(s, e)| e - s).sum();
        (self.settled_ns + held, self.late_ns)
    }

    fn merge(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.pending.sort_unstable();
        // All after the held stretches' last start (records in time order): append in
        // place, without copying what is held.
        if self
            .merged
            .last()
            .is_none_or(|last| self.pending[0].0 >= last.0)
        {
            for &(s, e) in &self.pending {
                match self.merged.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => self.merged.push((s, e)),
                }
            }
            self.pending.clear();
            self.settle_past_limit();
            return;
        }
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.merged.len() + self.pending.len());
        let (mut a, mut b) = (
            self.merged.iter().peekable(),
            self.pending.iter().peekable(),
        );
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x <= y => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            let &(s, e) = next.expect("peeked");
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        self.pending.clear();
        self.merged = out;
        self.settle_past_limit();
    }

    /// Past the limit of held stretches, sum the oldest half and let it go.
    fn settle_past_limit(&mut self) {
        if self.merged.len() > self.limit {
            let half = self.merged.len() / 2;
            self.settled_ns += self.merged[..half].iter().map(|&(s, e)| e - s).sum::<u64>();
            self.settled_until = self.merged[half].0;
            self.merged.drain(..half);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The union's length by brute force over unit steps.
    fn brute(intervals: &[(u64, u64)]) -> u64 {
        let max = intervals.iter().map(|i| i.1).max().unwrap_or(0);
        (0..max)
            .filter(|&t| intervals.iter().any(|&(s, e)| s <= t && t < e))
            .count() as u64
    }

    #[test]
    fn overlapping_nested_touching_and_empty_intervals() {
        let cases: &[(u64, u64)] = &[(10, 20), (15, 25), (12, 13), (25, 30), (40, 40), (50, 45)];
        let mut u = IntervalUnion::new();
        for &(s, e) in cases {
            u.add(s, e);
        }
        assert_eq!(u.total(), (20, 0));
        assert_eq!(brute(cases), 20);
    }

    #[test]
    fn out_of_order_input_equals_brute_force_through_many_merges() {
        // A deterministic scramble of 5000 intervals, merged every 2 (limit 2 would
        // settle; a large limit keeps everything exact).
        let mut x: u64 = 12345;
        let mut intervals = Vec::new();
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let s = (x >> 33) % 20_000;
            let len = (x >> 20) % 37;
            intervals.push((s, s + len));
        }
        let mut u = IntervalUnion::with_limit(1 << 20);
        for &(s, e) in &intervals {
            u.add(s, e);
        }
        assert_eq!(u.total(), (brute(&intervals), 0));
    }

    #[test]
    fn settling_in_order_input_stays_exact() {
        // In time order, as a dump mostly is: settling the old half loses nothing.
        let intervals: Vec<(u64, u64)> = (0..1000).map(|i| (i * 10, i * 10 + 7)).collect();
        let mut u = IntervalUnion::with_limit(8);
        for &(s, e) in &intervals {
            u.add(s, e);
        }
        assert_eq!(u.total(), (7000, 0));
        assert!(u.merged.len() <= 16, "{}", u.merged.len());
    }

    #[test]
    fn a_late_interval_is_counted_and_its_possible_error_reported() {
        let mut u = IntervalUnion::with_limit(4);
        for i in 0..100 {
            u.add(i * 10, i * 10 + 5);
        }
        u.total();
        assert!(u.settled_until > 0);
        // [0, 5) again: already counted, so counted twice now, and said so.
        u.add(0, 5);
        let (total, over) = u.total();
        assert_eq!((total, over), (505, 5));
        assert_eq!(
            total - over,
            brute(&(0..100).map(|i| (i * 10, i * 10 + 5)).collect::<Vec<_>>())
        );
    }
}
