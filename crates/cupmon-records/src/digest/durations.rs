//! Kernel durations for p50/p99 in bounded memory: a log-linear histogram (64 steps per
//! power of two, exact below 64 ns), so a quantile is the midpoint of its bucket, within
//! 0.8% of the true value, whatever the number of launches. Quantiles use the
//! nearest-rank rule (p99 of 100 values is the 99th smallest).

use serde::{Deserialize, Serialize};

/// Sub-buckets per power of two (2^SUB_BITS).
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// The largest relative error of [`Durations::quantile`] (half a bucket).
pub const QUANTILE_ERROR: f64 = 1.0 / (2 * SUB) as f64;

/// A histogram of durations in ns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Durations {
    /// Bucket index of `counts[0]`.
    first: usize,
    counts: Vec<u64>,
    n: u64,
}

fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - SUB_BITS;
    let mantissa = (v >> shift) & (SUB - 1);
    (SUB + u64::from(shift) * SUB + mantissa) as usize
}

/// `[low, high)` of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, i + 1);
    }
    let shift = (i - SUB) / SUB;
    let mantissa = (i - SUB) % SUB;
    let low = (SUB + mantissa) << shift;
    (low, low.saturating_add(1 << shift))
}

impl Durations {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn add(&mut self, ns: u64) {
        self.add_n(bucket(ns), 1);
    }

    fn add_n(&mut self, b: usize, n: u64) {
        if self.counts.is_empty() {
            self.first = b;
        }
        if b < self.first {
            let grow = self.first - b;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = b;
        }
        let i = b - self.first;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += n;
        self.n += n;
    }

    /// Add every duration of `other`.
    pub fn merge(&mut self, other: &Durations) {
        for (i, &n) in other.counts.iter().enumerate() {
            if n > 0 {
                self.add_n(other.first + i, n);
            }
        }
    }

    /// The `q` quantile (0 < q <= 1) in ns, `None` when empty: the midpoint of the
    /// bucket that holds the nearest-rank value (the value itself below 64 ns).
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (low, high) = bounds(self.first + i);
                return Some(if high - low == 1 {
                    low as f64
                } else {
                    (low as f64 + high as f64) / 2.0
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_numbers() {
        for v in [0, 1, 63, 64, 65, 127, 128, 1000, 123_456_789, u64::MAX / 3] {
            let (low, high) = bounds(bucket(v));
            assert!(low <= v && v < high, "{v}: [{low}, {high})");
        }
        for i in 0..2000 {
            assert_eq!(bounds(i).1, bounds(i + 1).0, "bucket {i}");
        }
    }

    #[test]
    fn quantiles_are_within_the_bound_of_nearest_rank() {
        let mut values: Vec<u64> = (0..10_007u64)
            .map(|i| 50 + (i * 7919 % 10_007) * 97)
            .collect();
        let mut d = Durations::new();
        for &v in &values {
            d.add(v);
        }
        values.sort_unstable();
        for q in [0.01, 0.5, 0.9, 0.99, 1.0] {
            let exact = values[((q * values.len() as f64).ceil() as usize).max(1) - 1] as f64;
            let got = d.quantile(q).expect("non-empty");
            assert!(
                (got - exact).abs() <= exact * QUANTILE_ERROR,
                "q {q}: {got} vs {exact}"
            );
        }
        let mut small = Durations::new();
        for v in [3, 1, 2] {
            small.add(v);
        }
        assert_eq!(small.quantile(0.5), Some(2.0), "exact below 64 ns");
        let mut merged = Durations::new();
        merged.merge(&small);
        merged.merge(&d);
        assert_eq!(merged.count(), d.count() + 3);
        assert_eq!(Durations::new().quantile(0.5), None);
    }
}
