//! The first collective where the ranks' sequences diverge, per communicator (the
//! ranks' NCCL streams matched in launch order), and who diverged: the ranks outside
//! the largest group that agrees. With two groups of one size, a group that lacks
//! the collective is the culprit (the others wait in it); else both are named.

use serde::Serialize;

use super::facts::{Collective, RankFacts};

/// How a rank's sequence differs from the others'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Difference {
    /// It never launched the collective the others launched.
    Missing,
    /// It launched a collective the others did not.
    Extra,
    /// It launched another collective, type or size (grid) at that place.
    Mismatch,
}

/// One rank that diverged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diverged {
    pub rank: usize,
    pub difference: Difference,
    /// What it launched at that place (`None`: nothing).
    pub launched: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    /// The communicator (1: the ranks' first NCCL streams).
    pub communicator: usize,
    /// The collective's number on it, from 1.
    pub index: usize,
    /// What the agreeing ranks launched there (`None`: nothing).
    pub expected: Option<String>,
    /// The ranks (positions in the diagnosis' rank list) that agree.
    pub agreeing: Vec<usize>,
    pub diverged: Vec<Diverged>,
    /// The groups were of one size: the sequences alone cannot tell who is wrong.
    pub ambiguous: bool,
}

fn describe(c: &Collective) -> String {
    match c.grid {
        Some([x, y, z]) => format!("{} (grid {x}x{y}x{z})", c.label()),
        None => c.label(),
    }
}

fn same(a: Option<&Collective>, b: Option<&Collective>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.same_as(b),
        (None, None) => true,
        _ => false,
    }
}

/// The first divergence of each communicator that all ranks (with NCCL) share.
pub fn divergences(ranks: &[RankFacts]) -> Vec<Divergence> {
    let with_nccl: Vec<usize> = (0..ranks.len())
        .filter(|&i| !ranks[i].nccl.is_empty())
        .collect();
    // A rank without NCCL kernels in a job whose others have them never reached the
    // first collective: it diverges at #1.
    let nccl_job = !with_nccl.is_empty();
    let communicators = ranks.iter().map(|r| r.nccl.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    if !nccl_job {
        return out;
    }
    for j in 0..communicators {
        let seqs: Vec<&[Collective]> = ranks
            .iter()
            .map(|r| r.nccl.get(j).map_or(&[][..], |s| &s.collectives[..]))
            .collect();
        let longest = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        let Some(k) = (0..longest).find(|&k| {
            let first = seqs[0].get(k);
            seqs.iter().any(|s| !same(s.get(k), first))
        }) else {
            continue;
        };
        // Group the ranks by what they launched at k.
        let mut groups: Vec<(Option<&Collective>, Vec<usize>)> = Vec::new();
        for (i, s) in seqs.iter().enumerate() {
            let op = s.get(k);
            match groups.iter_mut().find(|(g, _)| same(*g, op)) {
                Some((_, members)) => members.push(i),
                None => groups.push((op, vec![i])),
            }
        }
        groups.sort_by_key(|(op, m)| (std::cmp::Reverse(m.len()), op.is_none()));
        let top = groups[0].1.len();
        let tied = groups.iter().filter(|(_, m)| m.len() == top).count() > 1;
        // In a tie, the group that launched something is the one waiting for the rest.
        let (majority_op, agreeing) = if tied {
            groups
                .iter()
                .filter(|(_, m)| m.len() == top)
                .find(|(op, _)| op.is_some())
                .cloned()
                .unwrap_or_else(|| groups[0].clone())
        } else {
            groups[0].clone()
        };
        let majority = seqs[agreeing[0]];
        let ambiguous = tied
            && groups
                .iter()
                .filter(|(_, m)| m.len() == top)
                .all(|(op, _)| op.is_some());
        let diverged = (0..ranks.len())
            .filter(|i| !agreeing.contains(i))
            .map(|i| {
                let mine = seqs[i];
                let difference = match (mine.get(k), majority_op) {
                    (None, _) => Difference::Missing,
                    (Some(_), None) => Difference::Extra,
                    (Some(_), Some(expected)) => {
                        if same(mine.get(k + 1), Some(expected)) {
                            Difference::Extra
                        } else if majority
                            .get(k + 1)
                            .is_some_and(|next| same(mine.get(k), Some(next)))
                        {
                            Difference::Missing
                        } else {
                            Difference::Mismatch
                        }
                    }
                };
                Diverged {
                    rank: i,
                    difference,
                    launched: mine.get(k).map(describe),
                }
            })
            .collect();
        out.push(Divergence {
            communicator: j + 1,
            index: k + 1,
            expected: majority_op.map(describe),
            agreeing,
            diverged,
            ambiguous,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::facts::NcclStream;

    const AR: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    const AG: &str = "ncclDevKernel_AllGather_RING_LL";

    fn c(name: &str, grid: i32, corr: u32, done: bool) -> Collective {
        Collective {
            name: name.into(),
            collective: None,
            dtype: None,
            grid: Some([grid, 1, 1]),
            correlation_id: corr,
            start_ns: Some(1),
            end_ns: done.then_some(2),
            queued: false,
        }
    }

    fn rank(seq: &[(&str, i32)]) -> RankFacts {
        let n = seq.len();
        RankFacts {
            rank: None,
            pid: None,
            dump: "d".into(),
            nccl: vec![NcclStream {
                device: 0,
                stream: 13,
                collectives: seq
                    .iter()
                    .enumerate()
                    .map(|(i, &(name, grid))| c(name, grid, i as u32, i + 1 < n))
                    .collect(),
            }],
            last_end_ns: None,
            operations: 0,
            record: None,
            record_path: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn agreeing_sequences_do_not_diverge() {
        let r = [rank(&[(AR, 8), (AR, 8)]), rank(&[(AR, 8), (AR, 8)])];
        assert!(divergences(&r).is_empty());
    }

    #[test]
    fn of_two_ranks_the_one_that_lacks_the_collective_is_named() {
        let r = [
            rank(&[(AR, 8), (AR, 8), (AR, 8)]),
            rank(&[(AR, 8), (AR, 8)]),
        ];
        let d = &divergences(&r)[0];
        assert_eq!((d.index, d.agreeing.clone()), (3, vec![0]));
        assert_eq!(d.diverged[0].rank, 1);
        assert_eq!(d.diverged[0].difference, Difference::Missing);
        assert!(!d.ambiguous);
    }

    #[test]
    fn of_two_ranks_with_different_collectives_neither_is_trusted() {
        let r = [rank(&[(AR, 8), (AG, 8)]), rank(&[(AR, 8), (AR, 8)])];
        let d = &divergences(&r)[0];
        assert!(d.ambiguous);
        assert_eq!(d.diverged.len(), 1);
    }

    #[test]
    fn the_minority_is_named_missing_extra_or_mismatched() {
        let others = || rank(&[(AR, 8), (AR, 8), (AG, 8)]);
        let missing = [others(), rank(&[(AR, 8), (AG, 8)]), others()];
        assert_eq!(
            divergences(&missing)[0].diverged[0].difference,
            Difference::Missing
        );
        let extra = [
            others(),
            rank(&[(AR, 8), (AR, 8), (AR, 8), (AG, 8)]),
            others(),
        ];
        assert_eq!(
            divergences(&extra)[0].diverged[0].difference,
            Difference::Extra
        );
        let size = [others(), rank(&[(AR, 8), (AR, 4), (AG, 8)]), others()];
        let d = &divergences(&size)[0];
        assert_eq!(
            (d.index, d.diverged[0].difference),
            (2, Difference::Mismatch)
        );
        assert_eq!(d.diverged[0].rank, 1);
    }
}
