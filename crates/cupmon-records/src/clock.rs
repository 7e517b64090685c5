//! CUPTI's clock and the others. CUPTI stamps records with Unix-epoch ns by default,
//! but a client that registers a timestamp callback (torch.profiler's Kineto does, with
//! CPU cycle counts) changes the clock of every record from then on, cupmon's too,
//! unless cupmon interposes the registration (`cupmon run`). Such records are told
//! apart by magnitude (a Unix time in ns is above 10^18 since 2001; cycle counts since
//! boot are far below) and converted with a line fitted to pairs of (CUPTI timestamp,
//! Unix ns) sampled together: one per completed buffer in the chunk headers, and
//! those the monitor samples itself.

/// What every output does with a record on a foreign clock that cannot be converted
/// (too few samples of that clock: a dump cut short after a client such as
/// torch.profiler registered its timestamp callback). Its timestamps stay as CUPTI
/// wrote them, and it is never mixed with the records on the session's clock: not in
/// their counts, time span, busy time or kernel times; traces put it in a process of
/// its own ([`OFF_CLOCK_TRACK`]) with a `clock` arg ([`OFF_CLOCK_NAME`]); Parquet gives
/// it a row of its own with the clock named; `stats` and `report` count it apart.
pub const OFF_CLOCK_RULE: &str = "they are kept apart on their own clock (CUPTI's raw \
                                  timestamps): counted apart, and on a track of their own \
                                  in traces";

/// The `clock` a record kept on its own clock is flagged with.
pub const OFF_CLOCK_NAME: &str = "cupti_raw";

/// The trace process of the records on their own clock.
pub const OFF_CLOCK_TRACK: &str = "records on CUPTI's raw clock (not convertible)";

/// Timestamps below this are not Unix-epoch ns (10^18 ns is September 2001).
pub const UNIX_NS_FLOOR: u64 = 1_000_000_000_000_000_000;

/// Whether `t` (a non-zero CUPTI timestamp) is on another clock than Unix ns.
#[inline(always)]
pub fn is_foreign(t: u64) -> bool {
    // `t != 0 && t < UNIX_NS_FLOOR` in one compare: 0 wraps to the largest value.
    t.wrapping_sub(1) < UNIX_NS_FLOOR - 1
}

/// Pairs sampled at the same moment: what the foreign clock read, and Unix ns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClockSamples {
    pairs: Vec<(u64, u64)>,
}

impl ClockSamples {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep `(cupti_ns, unix_ns)` if CUPTI's reading is on a foreign clock.
    pub fn add(&mut self, cupti_ns: u64, unix_ns: u64) {
        if is_foreign(cupti_ns) && unix_ns >= UNIX_NS_FLOOR {
            self.pairs.push((cupti_ns, unix_ns));
        }
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    pub fn pairs(&self) -> &[(u64, u64)] {
        &self.pairs
    }

    /// The line through the samples (least squares), if they span enough time to give
    /// a rate: at least two samples 1 ms apart on the foreign clock.
    pub fn fit(&self) -> Option<ForeignClock> {
        let (lo, hi) = self
            .pairs
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &(c, _)| (lo.min(c), hi.max(c)));
        if self.pairs.len() < 2 || hi.saturating_sub(lo) < 1_000_000 {
            return None;
        }
        // Centre both axes on the first sample so the sums stay exact enough in f64.
        let (c0, u0) = self.pairs[0];
        let n = self.pairs.len() as f64;
        let (mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0);
        for &(c, u) in &self.pairs {
            let x = (i128::from(c) - i128::from(c0)) as f64;
            let y = (i128::from(u) - i128::from(u0)) as f64;
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
        }
        let var = sxx - sx * sx / n;
        if var <= 0.0 {
            return None;
        }
        let slope = (sxy - sx * sy / n) / var;
        let intercept = (sy - slope * sx) / n;
        // Cycle counters tick at 0.5-6 GHz; anything else is not a clock we understand.
        if !(0.1..=10.0).contains(&slope) {
            return None;
        }
        Some(ForeignClock {
            origin: (c0, u0),
            slope,
            intercept,
            samples: self.pairs.len(),
        })
    }
}

/// A foreign clock as a line: Unix ns = u0 + intercept + slope * (t - c0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForeignClock {
    origin: (u64, u64),
    /// Unix ns per foreign tick.
    pub slope: f64,
    intercept: f64,
    /// How many samples the line was fitted to.
    pub samples: usize,
}

impl ForeignClock {
    /// `t` on the foreign clock as Unix ns; Unix times (and 0) are returned as they are.
    pub fn to_unix(&self, t: u64) -> u64 {
        if !is_foreign(t) {
            return t;
        }
        // Offsets from the origin stay small enough for f64; the Unix origin itself
        // (~1.8e18) does not (f64 steps by 256 ns there), so it is added as an integer.
        let x = (i128::from(t) - i128::from(self.origin.0)) as f64;
        let y = (self.intercept + self.slope * x).round() as i128;
        u64::try_from(i128::from(self.origin.1) + y).unwrap_or(0)
    }

    /// Foreign ticks per ns (2.1 for a 2.1 GHz cycle counter).
    pub fn ticks_per_ns(&self) -> f64 {
        1.0 / self.slope
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn foreign_means_nonzero_and_before_the_unix_floor() {
        for (t, foreign) in [
            (0, false),
            (1, true),
            (UNIX_NS_FLOOR - 1, true),
            (UNIX_NS_FLOOR, false),
            (u64::MAX, false),
        ] {
            assert_eq!(is_foreign(t), foreign, "{t}");
        }
    }

    use super::*;

    #[test]
    fn fits_the_pairs_of_the_torch_mlp_recording() {
        // The chunk headers of tests/fixtures/h200-cupti13.0/torch_mlp.
        let mut s = ClockSamples::new();
        s.add(89_410_190_376, 1_795_979_273_074_282_687);
        s.add(89_413_810_586, 1_795_979_273_076_006_549);
        s.add(89_420_204_000, 1_795_979_273_079_051_142);
        s.add(1_795_979_265_354_826_778, 1_795_979_265_354_828_116); // Unix: ignored
        assert_eq!(s.len(), 3);
        let clock = s.fit().expect("a line");
        assert!((clock.ticks_per_ns() - 2.1).abs() < 0.001, "{clock:?}");
        for &(c, u) in s.pairs() {
            assert!((clock.to_unix(c) as i64 - u as i64).abs() < 2_000, "{c}");
        }
        assert_eq!(clock.to_unix(0), 0);
        assert_eq!(
            clock.to_unix(1_795_979_265_354_826_778),
            1_795_979_265_354_826_778
        );
    }

    #[test]
    fn one_sample_or_a_short_span_gives_no_line() {
        let mut s = ClockSamples::new();
        s.add(1_000_000_000, 1_700_000_000_000_000_000);
        assert_eq!(s.fit(), None);
        s.add(1_000_000_100, 1_700_000_000_000_000_050);
        assert_eq!(s.fit(), None, "100 ticks apart");
    }
}
