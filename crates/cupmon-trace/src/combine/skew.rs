//! Clock skew between ranks, as the ends of NCCL kernels show it: a collective ends at
//! about the same moment on every rank, so the k-th NCCL kernel of one rank against
//! the k-th of the lowest rank differs by the clocks' offset (plus noise).

use std::collections::BTreeMap;

use serde_json::Value;

/// A rank's median difference against the lowest rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankSkew {
    pub rank: i64,
    pub median_ns: i64,
    /// Collectives compared.
    pub samples: usize,
}

#[derive(Debug, Default)]
pub(super) struct SkewFinder {
    /// rank -> ends (absolute ns from the common base) of its NCCL kernels, in order.
    ends: BTreeMap<i64, Vec<i64>>,
}

impl SkewFinder {
    pub fn note(&mut self, rank: i64, event: &Value, _base: i128) {
        let is_nccl = event.get("cat").and_then(Value::as_str) == Some("kernel")
            && event
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| cupmon_records::nccl::NcclKernel::parse(n).is_some());
        if !is_nccl {
            return;
        }
        let (Some(ts), Some(dur)) = (
            event.get("ts").and_then(Value::as_f64),
            event.get("dur").and_then(Value::as_f64),
        ) else {
            return;
        };
        self.ends
            .entry(rank)
            .or_default()
            .push(((ts + dur) * 1000.0) as i64);
    }

    pub fn medians(&self) -> Vec<RankSkew> {
        let mut ranks = self.ends.iter();
        let Some((_, reference)) = ranks.next() else {
            return Vec::new();
        };
        let mut reference = reference.clone();
        reference.sort_unstable();
        ranks
            .map(|(&rank, ends)| {
                let mut ends = ends.clone();
                ends.sort_unstable();
                let mut diffs: Vec<i64> = ends.iter().zip(&reference).map(|(a, b)| a - b).collect();
                diffs.sort_unstable();
                RankSkew {
                    rank,
                    median_ns: diffs.get(diffs.len() / 2).copied().unwrap_or(0),
                    samples: diffs.len(),
                }
            })
            .collect()
    }
}
