//! `cupmon diagnose`: every rank's dump and hang records read into a verdict.
//!
//! - `facts`: one rank's NCCL sequences, last operation and last hang record.
//! - `state`: what a rank is stuck in.
//! - `diverge`: the first collective where the ranks' sequences diverge.
//! - `text`: the verdict in a few lines.
//!
//! Who is the culprit, in this order: ranks in a compute kernel that never ended
//! (the others wait for them in a collective); else the ranks whose collective
//! sequences diverge from the others' (missing, extra or mismatched collectives);
//! else ranks whose host stopped launching while others wait or progress.

mod diverge;
mod facts;
mod state;
mod text;

use std::path::PathBuf;

use serde::Serialize;

pub use diverge::{Difference, Diverged, Divergence};
pub use facts::{read_rank, Collective, NcclStream, RankFacts};
pub use state::{rank_state, RankState};
pub use text::write_text;

use crate::HangError;

/// One rank in the diagnosis.
#[derive(Debug, Clone, Serialize)]
pub struct RankVerdict {
    pub rank: Option<i64>,
    pub pid: Option<i64>,
    pub dump: PathBuf,
    pub state: RankState,
    /// Its last hang record: the file, why and when it was written.
    pub record: Option<PathBuf>,
    pub trigger: Option<String>,
    pub written_ns: Option<u64>,
}

/// A culprit and why.
#[derive(Debug, Clone, Serialize)]
pub struct Culprit {
    /// Position in [`Diagnosis::ranks`].
    pub index: usize,
    pub rank: Option<i64>,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    pub ranks: Vec<RankVerdict>,
    pub culprits: Vec<Culprit>,
    pub divergences: Vec<Divergence>,
    /// The verdict in one sentence.
    pub headline: String,
    #[serde(skip)]
    pub facts: Vec<RankFacts>,
    pub warnings: Vec<String>,
}

/// Reads every dump and diagnoses them together; a dump that cannot be read is a
/// warning (the others are diagnosed), none readable an error.
pub fn diagnose(dumps: &[PathBuf]) -> Result<Diagnosis, HangError> {
    let mut facts = Vec::new();
    let mut warnings = Vec::new();
    for d in dumps {
        match read_rank(d) {
            Ok(f) => facts.push(f),
            Err(e) => warnings.push(e.to_string()),
        }
    }
    if facts.is_empty() {
        return match warnings.into_iter().next() {
            Some(w) => Err(HangError::Dump {
                path: dumps[0].clone(),
                problem: w,
            }),
            None => Err(HangError::NoDumps),
        };
    }
    facts.sort_by_key(|f| (f.rank, f.pid));
    for f in &facts {
        for w in &f.warnings {
            warnings.push(format!("{}: {w}", f.dump.display()));
        }
    }
    Ok(judge(facts, warnings))
}

/// The verdict over facts already read.
pub fn judge(facts: Vec<RankFacts>, warnings: Vec<String>) -> Diagnosis {
    let states: Vec<RankState> = facts.iter().map(rank_state).collect();
    let divergences = diverge::divergences(&facts);
    let who = |i: usize| text::rank_name(&facts[i]);
    let mut culprits = Vec::new();
    for (i, s) in states.iter().enumerate() {
        if let RankState::ComputeKernel {
            name,
            since_ns,
            launched_ns,
            recorded,
            ..
        } = s
        {
            let what = cupmon_records::demangle(name);
            let why = if since_ns.is_some() {
                format!(
                    "a compute kernel running since {}: {what}",
                    text::time(*since_ns)
                )
            } else if *recorded {
                // A forced flush's record of an unfinished kernel can hold no time at
                // all (the H200's spinning kernel): started or not cannot be told.
                format!(
                    "a compute kernel launched at {} that never ended (CUPTI's record of \
                     it has no start time: running, or waiting behind other work): {what}",
                    text::time(*launched_ns)
                )
            } else {
                format!(
                    "a compute kernel launched at {} with no record from CUPTI (not \
                     started, or its record not delivered): {what}",
                    text::time(*launched_ns)
                )
            };
            culprits.push(Culprit {
                index: i,
                rank: facts[i].rank,
                why,
            });
        }
    }
    if culprits.is_empty() {
        for d in &divergences {
            for x in &d.diverged {
                let what = match x.difference {
                    Difference::Missing => format!(
                        "never launched collective #{} ({}) of communicator {} that {} launched",
                        d.index,
                        d.expected.as_deref().unwrap_or("-"),
                        d.communicator,
                        text::list(d.agreeing.iter().map(|&i| who(i)))
                    ),
                    Difference::Extra => format!(
                        "launched an extra collective #{} ({}) on communicator {}",
                        d.index,
                        x.launched.as_deref().unwrap_or("-"),
                        d.communicator
                    ),
                    Difference::Mismatch => format!(
                        "launched {} as collective #{} of communicator {} where {} launched {}",
                        x.launched.as_deref().unwrap_or("nothing"),
                        d.index,
                        d.communicator,
                        text::list(d.agreeing.iter().map(|&i| who(i))),
                        d.expected.as_deref().unwrap_or("nothing")
                    ),
                };
                culprits.push(Culprit {
                    index: x.rank,
                    rank: facts[x.rank].rank,
                    why: what,
                });
            }
            if d.ambiguous {
                // Two groups of one size: the sequences cannot tell which is wrong.
                for &i in &d.agreeing {
                    culprits.push(Culprit {
                        index: i,
                        rank: facts[i].rank,
                        why: format!(
                            "launched {} as collective #{} of communicator {} (the other \
                             group launched something else; the sequences cannot tell which \
                             is wrong)",
                            d.expected.as_deref().unwrap_or("nothing"),
                            d.index,
                            d.communicator
                        ),
                    });
                }
            }
        }
    }
    if culprits.is_empty() {
        let stopped: Vec<usize> = (0..states.len())
            .filter(|&i| matches!(states[i], RankState::HostStopped { .. }))
            .collect();
        for &i in &stopped {
            if let RankState::HostStopped {
                last_launch_ns,
                last_call,
                blocked_in,
                ..
            } = &states[i]
            {
                let mut why = format!(
                    "no GPU work in flight: the host stopped launching (last launch {})",
                    text::time(*last_launch_ns)
                );
                if let Some(b) = blocked_in {
                    why.push_str(&format!("; a thread is blocked in {b}"));
                } else if let Some(c) = last_call {
                    why.push_str(&format!("; last CUDA call seen: {c}"));
                }
                culprits.push(Culprit {
                    index: i,
                    rank: facts[i].rank,
                    why,
                });
            }
        }
    }
    let headline = headline(&facts, &states, &culprits);
    let ranks = facts
        .iter()
        .zip(states)
        .map(|(f, state)| RankVerdict {
            rank: f.rank,
            pid: f.pid,
            dump: f.dump.clone(),
            state,
            record: f.record_path.clone(),
            trigger: f
                .record
                .as_ref()
                .map(|r| format!("{} ({})", r.trigger.word(), r.detail)),
            written_ns: f.record.as_ref().map(|r| r.written_ns),
        })
        .collect();
    Diagnosis {
        ranks,
        culprits,
        divergences,
        headline,
        facts,
        warnings,
    }
}

fn headline(facts: &[RankFacts], states: &[RankState], culprits: &[Culprit]) -> String {
    if facts.iter().all(|f| f.record.is_none()) {
        return "no hang records in these dumps (the job did not hang, or was killed by \
                SIGKILL before cupmon could write one): run `cupmon hang-dump` on a hung job"
            .into();
    }
    if culprits.is_empty() {
        let waiting = states
            .iter()
            .filter(|s| matches!(s, RankState::Collective { .. }))
            .count();
        return if waiting == states.len() {
            "no culprit in these dumps: every rank waits in the same collective and their \
             sequences agree (a rank outside these dumps, the network, or sizes the kernel \
             records cannot show)"
                .into()
        } else {
            "no culprit found: see each rank's state below".into()
        };
    }
    let mut names: Vec<String> = culprits
        .iter()
        .map(|c| text::rank_name(&facts[c.index]))
        .collect();
    names.dedup();
    format!("culprit: {}", text::list(names.into_iter()))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::{HangRecord, Op, StreamState, Trigger, FORMAT};

    /// One rank whose hang record holds one unfinished kernel, as the H200's forced
    /// flush gave a kernel spinning for seconds: no start, no end.
    fn rank_with(start_ns: Option<u64>, launched_ns: Option<u64>) -> RankFacts {
        let kernel = Op {
            kind: "kernel".into(),
            name: "_Z12spin_foreverv".into(),
            correlation_id: 9,
            start_ns,
            end_ns: None,
            launched_ns,
            grid: Some([1, 1, 1]),
            block: Some([1, 1, 1]),
            bytes: None,
        };
        let record = HangRecord {
            format: FORMAT,
            trigger: Trigger::NoProgress,
            detail: "no progress".into(),
            written_ns: 1_000_000_000_000,
            pid: 7,
            rank: Some(1),
            last_progress_ns: None,
            last_completed_end_ns: None,
            last_launch_ns: launched_ns,
            streams: vec![StreamState {
                device: Some(0),
                context: Some(1),
                stream: Some(13),
                running: vec![kernel],
                queued: Vec::new(),
                recent: Vec::new(),
                completed: 0,
            }],
            threads: Vec::new(),
            communicators: Vec::new(),
            notes: Vec::new(),
        };
        RankFacts {
            rank: Some(1),
            pid: Some(7),
            dump: PathBuf::from("rank1"),
            nccl: Vec::new(),
            last_end_ns: None,
            operations: 0,
            record: Some(record),
            record_path: None,
            warnings: Vec::new(),
        }
    }

    fn said(facts: RankFacts) -> (String, String) {
        let d = judge(vec![facts], Vec::new());
        let mut text = Vec::new();
        write_text(&mut text, &d).expect("text");
        (
            d.culprits[0].why.clone(),
            String::from_utf8(text).expect("utf-8"),
        )
    }

    #[test]
    fn a_kernel_the_forced_flush_gave_no_time_is_unfinished_not_never_started() {
        let (why, text) = said(rank_with(None, Some(999_000_000_000)));
        assert!(
            why.starts_with("a compute kernel launched at ") && why.contains("that never ended"),
            "{why}"
        );
        assert!(
            !why.contains("never started") && !why.contains(" - "),
            "{why}"
        );
        assert!(
            text.contains("unfinished compute kernel spin_forever()"),
            "{text}"
        );
        assert!(
            text.contains("(1.0 s before its record), no start time"),
            "{text}"
        );
        assert!(
            text.contains("0 running, 1 unfinished with no start time"),
            "{text}"
        );
    }

    #[test]
    fn a_kernel_with_a_start_is_running_since_it() {
        let (why, text) = said(rank_with(Some(999_500_000_000), Some(999_000_000_000)));
        assert!(why.starts_with("a compute kernel running since "), "{why}");
        assert!(text.contains("in compute kernel spin_forever()"), "{text}");
        assert!(text.contains("1 running, 0 queued"), "{text}");
    }
}
