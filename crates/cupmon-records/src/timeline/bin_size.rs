//! The bin a timeline uses when none is given: the shortest round duration (1, 2, 5
//! steps; 10, 15, 30 s and min; hours and days) that cuts the span into at most
//! [`TARGET_BINS`] bins, so that the bin starts read well on a clock.

use std::time::Duration;

/// How many bins a timeline has at most with the automatic bin.
pub const TARGET_BINS: u64 = 60;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const MIN: u64 = 60 * S;
const H: u64 = 60 * MIN;
const DAY: u64 = 24 * H;

const ROUND: &[u64] = &[
    US,
    2 * US,
    5 * US,
    10 * US,
    20 * US,
    50 * US,
    100 * US,
    200 * US,
    500 * US,
    MS,
    2 * MS,
    5 * MS,
    10 * MS,
    20 * MS,
    50 * MS,
    100 * MS,
    200 * MS,
    500 * MS,
    S,
    2 * S,
    5 * S,
    10 * S,
    15 * S,
    30 * S,
    MIN,
    2 * MIN,
    5 * MIN,
    10 * MIN,
    15 * MIN,
    30 * MIN,
    H,
    2 * H,
    3 * H,
    6 * H,
    12 * H,
    DAY,
];

/// The automatic bin for a span of `span_ns`.
pub fn auto_bin(span_ns: u64) -> Duration {
    let want = span_ns.div_ceil(TARGET_BINS).max(1);
    let ns = ROUND
        .iter()
        .copied()
        .find(|&r| r >= want)
        .unwrap_or_else(|| want.div_ceil(DAY) * DAY);
    Duration::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_bins_make_at_most_sixty() {
        assert_eq!(auto_bin(0), Duration::from_micros(1));
        assert_eq!(auto_bin(60 * S), Duration::from_secs(1));
        assert_eq!(auto_bin(60 * S + 1), Duration::from_secs(2));
        assert_eq!(auto_bin(3600 * S), Duration::from_secs(60));
        assert_eq!(auto_bin(24 * H), Duration::from_secs(30 * 60));
        assert_eq!(auto_bin(100 * DAY), Duration::from_secs(2 * 86_400));
        for span in [1, 999, 12_345_678, 7 * H + 3, 40 * DAY] {
            let bin = auto_bin(span).as_nanos() as u64;
            assert!(span.div_ceil(bin) <= TARGET_BINS, "{span}");
        }
    }
}
