//! The measure: which rank's compute runs slowest against the others in one period,
//! and which kernels account for the difference.
//!
//! Ranks of one job run the same kernels (name and launch configuration), but not
//! always as many in a period: ranks that do not synchronise, or a period cut in the
//! middle of a step, give one rank fewer steps. So each rank's kernel time is first
//! brought to the same amount of work:
//!
//! 1. the kernels every compared rank ran in the period are the *matched* kernels;
//!    for each, the reference count is the median of the ranks' launch counts;
//! 2. a rank's *work* is the median over the matched kernels of its launches over
//!    the reference count (1.0 when it ran as many steps as the median rank);
//! 3. its *normalised* time of kernel `k` is its GPU time in `k` divided by its work,
//!    and its *compute* the sum over all its kernels (NCCL kernels left out);
//! 4. its *score* is its compute over the median of the other ranks' compute, less 1:
//!    +0.05 when it spends 5% more GPU time on the same work.
//!
//! The rank with the highest score is the period's straggler when the score is at
//! least [`THRESHOLD`]; the kernels behind it are those whose normalised time exceeds
//! the other ranks' median most (a kernel only it runs counts whole), each with its
//! share of the difference. A rank that does the same work with slower kernels and a
//! rank that does extra work per step are both found.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::collect::PeriodTotals;
use crate::key::KernelKey;

/// The least score that names a straggler: half the smallest slowdown cupmon is
/// asked to find (5%, one extra kernel per step on one rank in twenty). A balanced
/// job has to be 2.5% apart in GPU time per unit of work for a false alarm; a rank 5%
/// slower clears it by as much.
pub const THRESHOLD: f64 = 0.025;
/// Fewest compute launches a rank needs in a period to be compared: fewer (a rank
/// just starting, a period cut by the end of the dump) say nothing about speed.
pub const MIN_LAUNCHES: u64 = 100;
/// How many kernels a verdict names.
pub const TOP_KERNELS: usize = 5;

/// One rank's figures in a compared period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankScore {
    /// Index into the analysis' ranks.
    pub rank: usize,
    /// Launches relative to the median rank (see the module).
    pub work: f64,
    /// Compute kernels' GPU time brought to the reference work, ns.
    pub compute_ns: f64,
    /// Compute over the other ranks' median compute, less 1.
    pub score: f64,
}

/// A kernel behind a straggler's difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Culprit {
    pub kernel: KernelKey,
    /// The straggler's normalised GPU time in it, less the other ranks' median, ns.
    pub excess_ns: f64,
    /// `excess_ns` over the straggler's whole difference (compute less the others'
    /// median compute).
    pub share: f64,
    /// Launches and GPU time on the straggler (as recorded, not normalised)...
    pub launches: u64,
    pub ns: u64,
    /// ...and the other ranks' median of each (0 where a kernel is the straggler's own).
    pub others_launches: f64,
    pub others_ns: f64,
}

/// A period's straggler.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Straggler {
    pub rank: usize,
    pub score: f64,
    /// Its compute less the other ranks' median compute, ns (per reference work).
    pub excess_ns: f64,
    pub kernels: Vec<Culprit>,
}

/// What one period's comparison found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The ranks compared (those with at least [`MIN_LAUNCHES`] compute launches).
    pub scores: Vec<RankScore>,
    pub straggler: Option<Straggler>,
    /// Why no rank could be compared, when none was.
    pub not_compared: Option<String>,
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Compare the ranks' totals of one period (`periods[i]`: rank `i`'s, `None` when it
/// recorded nothing in it), with `threshold` as the least score that names a rank.
pub fn compare(periods: &[Option<&PeriodTotals>], threshold: f64) -> Comparison {
    let ranks: Vec<(usize, &PeriodTotals)> = periods
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, p)))
        .filter(|(_, p)| p.compute_launches() >= MIN_LAUNCHES)
        .collect();
    let not = |why: &str| Comparison {
        scores: Vec::new(),
        straggler: None,
        not_compared: Some(why.to_owned()),
    };
    if ranks.len() < 2 {
        return not(&format!(
            "fewer than two ranks ran {MIN_LAUNCHES} compute kernels or more"
        ));
    }
    let matched: Vec<&KernelKey> = ranks[0]
        .1
        .compute
        .keys()
        .filter(|k| ranks.iter().all(|(_, p)| p.compute.contains_key(*k)))
        .collect();
    if matched.is_empty() {
        return not("no compute kernel ran on every rank");
    }
    let reference: HashMap<&KernelKey, f64> = matched
        .iter()
        .map(|k| {
            let mut n: Vec<f64> = ranks
                .iter()
                .map(|(_, p)| p.compute[*k].launches as f64)
                .collect();
            (*k, median(&mut n))
        })
        .collect();
    let work: Vec<f64> = ranks
        .iter()
        .map(|(_, p)| {
            let mut ratios: Vec<f64> = matched
                .iter()
                .map(|k| p.compute[*k].launches as f64 / reference[*k])
                .collect();
            median(&mut ratios).max(f64::MIN_POSITIVE)
        })
        .collect();
    let compute: Vec<f64> = ranks
        .iter()
        .zip(&work)
        .map(|((_, p), w)| p.compute_ns() as f64 / w)
        .collect();
    let others = |i: usize, of: &dyn Fn(usize) -> f64| {
        let mut v: Vec<f64> = (0..ranks.len()).filter(|&j| j != i).map(of).collect();
        median(&mut v)
    };
    let scores: Vec<RankScore> = (0..ranks.len())
        .map(|i| {
            let base = others(i, &|j| compute[j]);
            RankScore {
                rank: ranks[i].0,
                work: work[i],
                compute_ns: compute[i],
                score: if base > 0.0 {
                    compute[i] / base - 1.0
                } else {
                    0.0
                },
            }
        })
        .collect();
    let worst = (0..scores.len())
        .max_by(|&a, &b| scores[a].score.total_cmp(&scores[b].score).then(b.cmp(&a)))
        .expect("two ranks");
    let straggler = (scores[worst].score >= threshold).then(|| {
        let i = worst;
        let excess_ns = compute[i] - others(i, &|j| compute[j]);
        let keys: BTreeSet<&KernelKey> = ranks[i].1.compute.keys().collect();
        let mut kernels: Vec<Culprit> = keys
            .into_iter()
            .map(|k| {
                let own = ranks[i].1.compute[k];
                let normalised =
                    |j: usize| ranks[j].1.compute.get(k).map_or(0.0, |t| t.ns as f64) / work[j];
                let excess = normalised(i) - others(i, &normalised);
                Culprit {
                    kernel: k.clone(),
                    excess_ns: excess,
                    share: if excess_ns > 0.0 {
                        excess / excess_ns
                    } else {
                        0.0
                    },
                    launches: own.launches,
                    ns: own.ns,
                    others_launches: others(i, &|j| {
                        ranks[j].1.compute.get(k).map_or(0.0, |t| t.launches as f64)
                    }),
                    others_ns: others(i, &|j| {
                        ranks[j].1.compute.get(k).map_or(0.0, |t| t.ns as f64)
                    }),
                }
            })
            .filter(|c| c.excess_ns > 0.0)
            .collect();
        kernels.sort_by(|a, b| {
            b.excess_ns
                .total_cmp(&a.excess_ns)
                .then_with(|| a.kernel.cmp(&b.kernel))
        });
        kernels.truncate(TOP_KERNELS);
        Straggler {
            rank: ranks[i].0,
            score: scores[i].score,
            excess_ns,
            kernels,
        }
    });
    Comparison {
        scores,
        straggler,
        not_compared: None,
    }
}
