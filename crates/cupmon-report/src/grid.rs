//! The report's time bins: one grid for all the processes of a run, so that their
//! lines share the axis and a bin means the same minute on every rank.

use std::time::Duration;

use cupmon_records::timeline::auto_bin;

use crate::ReportError;

/// About how many bins the automatic bin gives (a 24-hour run: 1-minute bins).
pub const TARGET_BINS: u64 = 1500;
/// The most bins a report holds: with 8 ranks, about 2.5 MB of chart data.
pub const MAX_BINS: u64 = 10_000;

/// `[from, to)` in Unix ns cut into bins of `bin_ns` (the last may be shorter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub from_ns: u64,
    pub to_ns: u64,
    pub bin_ns: u64,
}

impl Grid {
    /// Bins of `bin` over `[from, to)`; `None`: the round bin that gives at most about
    /// [`TARGET_BINS`].
    pub fn new(from_ns: u64, to_ns: u64, bin: Option<Duration>) -> Result<Self, ReportError> {
        let to_ns = to_ns.max(from_ns);
        let span = to_ns - from_ns;
        // auto_bin aims at 60 bins; asking it for a span TARGET_BINS/60 times shorter
        // gives the same round steps for TARGET_BINS.
        let bin = bin.unwrap_or_else(|| auto_bin(span.saturating_mul(60) / TARGET_BINS));
        let bin_ns = u64::try_from(bin.as_nanos()).unwrap_or(u64::MAX);
        if bin_ns == 0 {
            return Err(ReportError::ZeroBin);
        }
        // Bins of whole seconds start at a whole second: the segments' digests (in
        // one-second bins) then add into them exactly, and a report need not read
        // every record.
        const S: u64 = cupmon_records::digest::second_bins_ns();
        let (from_ns, to_ns) = if bin_ns.is_multiple_of(S) {
            (from_ns / S * S, to_ns)
        } else {
            (from_ns, to_ns)
        };
        let grid = Self {
            from_ns,
            to_ns,
            bin_ns,
        };
        let bins = grid.bins() as u64;
        if bins > MAX_BINS {
            return Err(ReportError::TooManyBins {
                bin_ns,
                span_ns: span,
                bins,
            });
        }
        Ok(grid)
    }

    pub fn bins(&self) -> usize {
        (self.to_ns - self.from_ns).div_ceil(self.bin_ns) as usize
    }

    pub fn span_ns(&self) -> u64 {
        self.to_ns - self.from_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_bins_are_round_and_bounded() {
        const MIN: u64 = 60_000_000_000;
        let day = Grid::new(0, 24 * 60 * MIN, None).expect("grid");
        assert_eq!(day.bin_ns, MIN);
        assert_eq!(day.bins(), 1440);
        let short = Grid::new(5, 5 + 300_000_000, None).expect("grid");
        assert_eq!(short.bin_ns, 200_000);
        assert!(short.bins() as u64 <= TARGET_BINS);
        let err = Grid::new(0, 24 * 60 * MIN, Some(Duration::from_secs(1))).unwrap_err();
        assert!(err.to_string().contains("86400 bins"), "{err}");
        assert!(Grid::new(0, 10, Some(Duration::ZERO)).is_err());
        assert_eq!(Grid::new(7, 7, None).expect("empty").bins(), 0);
    }
}
