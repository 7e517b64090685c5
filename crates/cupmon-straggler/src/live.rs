//! The recent past of running ranks, for `cupmon status` and `cupmon run`'s metrics:
//! each rank's dump read over the same last window (a minute by default, ending at the
//! newest record of any rank), one period compared as [`compare`] compares a minute.
//! A dump is about one flush period behind its GPU, so this is too.

use std::path::PathBuf;

use cupmon_records::{Dump, TimeRange};
use serde::Serialize;

use crate::collect::collect;
use crate::compare::{compare, Comparison};
use crate::each_dump::each_dump;
use crate::StragglerError;

/// One rank's last window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankRecent {
    pub label: String,
    pub rank: Option<i64>,
    pub dir: PathBuf,
    /// The end of its newest record (kernel, copy or memset), Unix ns: its GPU's last
    /// progress as the dump knows it. `None`: no record yet.
    pub last_ns: Option<u64>,
    /// Kernels that started in the window.
    pub kernels: u64,
    /// Busy time (union of kernel intervals) over the window, averaged over the
    /// devices that ran kernels.
    pub busy_fraction: f64,
    /// Time in NCCL kernels over busy time.
    pub nccl_share: f64,
    /// Its score in the window's comparison (`None`: not compared).
    pub score: Option<f64>,
}

/// Every rank's last window and their comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recent {
    pub from_ns: u64,
    pub to_ns: u64,
    pub ranks: Vec<RankRecent>,
    /// Rank indices in `comparison` are indices into `ranks`.
    pub comparison: Comparison,
}

/// The last `window_ns` of `dumps`, ending at the newest record of any of them.
pub fn recent(dumps: &[Dump], window_ns: u64, threshold: f64) -> Result<Recent, StragglerError> {
    let dump_err = |d: &Dump, err| StragglerError::Dump {
        dir: d.dir().to_path_buf(),
        err,
    };
    let mut lasts = Vec::with_capacity(dumps.len());
    for d in dumps {
        lasts.push(
            d.time_span()
                .map_err(|e| dump_err(d, e))?
                .get()
                .map(|s| s.1),
        );
    }
    let to_ns = lasts.iter().flatten().copied().max().unwrap_or(0);
    let from_ns = to_ns.saturating_sub(window_ns);
    let range = TimeRange::new(Some(from_ns), None);
    // One period holding the whole window: every start falls in period 0. Each dump
    // walks its own last minute, a core each.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let totals = each_dump(dumps, threads, |d| collect(d, &range, u64::MAX))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let periods: Vec<_> = totals.iter().map(|t| t.periods.get(&0)).collect();
    let comparison = compare(&periods, threshold);
    let window = to_ns.saturating_sub(from_ns).max(1) as f64;
    let ranks = totals
        .iter()
        .zip(lasts)
        .enumerate()
        .map(|(i, (t, last_ns))| {
            let p = t.periods.get(&0).cloned().unwrap_or_default();
            RankRecent {
                label: t.label.clone(),
                rank: t.rank,
                dir: t.dir.clone(),
                last_ns,
                kernels: p.kernels,
                busy_fraction: if p.devices > 0 {
                    p.busy_ns as f64 / (window * p.devices as f64)
                } else {
                    0.0
                },
                nccl_share: if p.busy_ns > 0 {
                    p.nccl_ns as f64 / p.busy_ns as f64
                } else {
                    0.0
                },
                score: comparison
                    .scores
                    .iter()
                    .find(|s| s.rank == i)
                    .map(|s| s.score),
            }
        })
        .collect();
    Ok(Recent {
        from_ns,
        to_ns,
        ranks,
        comparison,
    })
}
