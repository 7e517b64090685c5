//! When kernels went unaccounted, to the flush period: at each flush the launch
//! counter against the kernels recorded and records dropped. Their difference (the
//! deficit) is the kernels in flight plus those lost; what is lost stays lost, so the
//! loss among the kernels launched before a flush is at most the smallest deficit
//! from that flush on. Where that bound rises, in the flush period after a sample, and
//! never comes back down is where the loss is placed (the earliest the counts allow:
//! the loss by a time is never more than the ranges up to it say).
//!
//! Kept as a stack of the samples whose deficit no later sample undercuts (the
//! increasing minimums), so memory grows only with persistent loss, and at most
//! [`MAX_SAMPLES`] (past it the oldest ranges are joined into one, wider).

use cupmon_records::dump::LossRange;

/// Samples kept at most.
pub const MAX_SAMPLES: usize = 512;

#[derive(Debug, Clone, Copy)]
struct Sample {
    unix_ns: u64,
    /// The next sample's time (the end of the flush period after this one).
    next_unix_ns: Option<u64>,
    deficit: u64,
}

/// The flush samples that place the loss in time; see the module docs.
#[derive(Debug, Default)]
pub(crate) struct LossTrack {
    /// Increasing deficits, the last sample last; the first is the session's start
    /// (deficit 0) or the latest sample since with nothing missing.
    kept: Vec<Sample>,
}

impl LossTrack {
    /// Counting began at `unix_ns`: nothing launched, nothing missing.
    pub fn start(unix_ns: u64) -> Self {
        Self {
            kept: vec![Sample {
                unix_ns,
                next_unix_ns: None,
                deficit: 0,
            }],
        }
    }

    /// At a flush: kernels launched, minus those recorded and records dropped.
    pub fn note(&mut self, unix_ns: u64, deficit: u64) {
        let Some(last) = self.kept.last_mut() else {
            return; // not counting
        };
        last.next_unix_ns = Some(unix_ns);
        push(&mut self.kept, unix_ns, deficit);
        if self.kept.len() > MAX_SAMPLES {
            // Join the oldest range into the next: from the start to the end of the
            // removed sample's period holds both.
            let removed = self.kept.remove(1);
            self.kept[0].next_unix_ns = removed.next_unix_ns;
        }
    }

    /// The ranges, as if a last sample were taken at `unix_ns` with `deficit` (the
    /// session's end, or now for a meta written while it runs).
    pub fn ranges(&self, unix_ns: u64, deficit: u64) -> Vec<LossRange> {
        let mut kept = self.kept.clone();
        let Some(last) = kept.last_mut() else {
            return Vec::new();
        };
        last.next_unix_ns = Some(unix_ns);
        push(&mut kept, unix_ns, deficit);
        let mut ranges: Vec<LossRange> = Vec::new();
        for pair in kept.windows(2) {
            let (before, after) = (pair[0], pair[1]);
            let from_unix_ns = before.unix_ns;
            let to_unix_ns = before.next_unix_ns.unwrap_or(after.unix_ns);
            let kernels = after.deficit - before.deficit;
            match ranges.last_mut() {
                Some(r) if r.to_unix_ns >= from_unix_ns => {
                    r.to_unix_ns = r.to_unix_ns.max(to_unix_ns);
                    r.kernels += kernels;
                }
                _ => ranges.push(LossRange {
                    from_unix_ns,
                    to_unix_ns,
                    kernels,
                }),
            }
        }
        ranges
    }
}

/// Push a sample, dropping those it undercuts (a sample at the start's deficit, 0,
/// becomes the new start: nothing was lost before it).
fn push(kept: &mut Vec<Sample>, unix_ns: u64, deficit: u64) {
    while kept.last().is_some_and(|s| s.deficit >= deficit) {
        kept.pop();
    }
    kept.push(Sample {
        unix_ns,
        next_unix_ns: None,
        deficit,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn range(from: u64, to: u64, kernels: u64) -> LossRange {
        LossRange {
            from_unix_ns: from * S,
            to_unix_ns: to * S,
            kernels,
        }
    }

    #[test]
    fn kernels_in_flight_at_a_flush_are_not_a_loss() {
        let mut t = LossTrack::start(0);
        for (at, deficit) in [(1, 300), (2, 10), (3, 500), (4, 0)] {
            t.note(at * S, deficit);
        }
        assert_eq!(t.ranges(5 * S, 0), []);
    }

    #[test]
    fn a_loss_is_placed_in_the_flush_period_where_it_stayed() {
        let mut t = LossTrack::start(0);
        // In flight at 1 s, 700 lost between 2 s and 3 s, 200 more between 4 s and 6 s.
        for (at, deficit) in [(1, 50), (2, 0), (3, 760), (4, 700), (5, 710), (6, 900)] {
            t.note(at * S, deficit);
        }
        assert_eq!(t.ranges(7 * S, 900), [range(2, 3, 700), range(4, 6, 200)]);
        let total: u64 = t.ranges(7 * S, 900).iter().map(|r| r.kernels).sum();
        assert_eq!(total, 900, "the ranges add up to the loss");
    }

    #[test]
    fn a_loss_growing_over_flushes_is_one_range() {
        let mut t = LossTrack::start(0);
        for (at, deficit) in [(1, 0), (2, 100), (3, 200), (4, 300)] {
            t.note(at * S, deficit);
        }
        assert_eq!(t.ranges(5 * S, 300), [range(1, 4, 300)]);
    }

    #[test]
    fn past_the_sample_cap_the_oldest_ranges_join_and_still_add_up() {
        let mut t = LossTrack::start(0);
        let n = MAX_SAMPLES as u64 + 100;
        for i in 1..=n {
            // A loss every period, never recovered.
            t.note(i * S, i);
        }
        assert_eq!(t.kept.len(), MAX_SAMPLES);
        let ranges = t.ranges((n + 1) * S, n);
        assert_eq!(ranges.iter().map(|r| r.kernels).sum::<u64>(), n);
        assert_eq!(ranges[0].from_unix_ns, 0);
        assert!(ranges
            .windows(2)
            .all(|w| w[0].to_unix_ns < w[1].from_unix_ns));
    }
}
