//! Per rank, how much of each GPU's busy time had an NCCL kernel running, from the
//! kernel events of the rank's trace (Kineto's: pid = device, `ts`/`dur` in µs), for
//! `combine`'s summary: a rank that waits in collectives far longer than the others
//! is the one the others wait for least (or a straggler's victim).

use std::collections::BTreeMap;

use cupmon_records::nccl::{CollectiveShare, CollectiveStats};
use serde_json::Value;

/// One rank's NCCL kernel time against its kernel time, per device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankCollectives {
    pub rank: i64,
    pub stats: CollectiveStats,
}

#[derive(Debug, Default)]
pub(super) struct CollectiveFinder {
    by_rank: BTreeMap<i64, CollectiveShare>,
}

impl CollectiveFinder {
    /// A trace event of `rank` as its own trace has it, `base_ns` that trace's base time.
    pub fn note(&mut self, rank: i64, event: &Value, base_ns: i128) {
        if event.get("cat").and_then(Value::as_str) != Some("kernel")
            || event.get("ph").and_then(Value::as_str) != Some("X")
        {
            return;
        }
        let (Some(name), Some(device), Some(ts), Some(dur)) = (
            event.get("name").and_then(Value::as_str),
            event.get("pid").and_then(Value::as_u64),
            event.get("ts").and_then(Value::as_f64),
            event.get("dur").and_then(Value::as_f64),
        ) else {
            return;
        };
        let (Ok(device), true) = (u32::try_from(device), ts >= 0.0 && dur >= 0.0) else {
            return;
        };
        // Absolute ns: the share's rules take a zero start for "no time".
        let start = base_ns + (ts * 1000.0).round() as i128;
        let end = start + (dur * 1000.0).round() as i128;
        let (Ok(start), Ok(end)) = (u64::try_from(start), u64::try_from(end)) else {
            return;
        };
        self.by_rank
            .entry(rank)
            .or_default()
            .add_named(device, name, start, end);
    }

    /// Ranks with kernels, lowest first; `top` collectives each.
    pub fn finish(self, top: usize) -> Vec<RankCollectives> {
        self.by_rank
            .into_iter()
            .map(|(rank, share)| RankCollectives {
                rank,
                stats: share.finish(top),
            })
            .collect()
    }
}
