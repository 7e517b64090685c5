//! What one rank is stuck in, from its hang record (or, without one, its dump).

use serde::Serialize;

use super::facts::RankFacts;
use cupmon_records::nccl::NcclKernel;

/// One rank's state.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum RankState {
    /// A compute kernel launched and never ended.
    ComputeKernel {
        name: String,
        device: Option<u32>,
        stream: Option<u32>,
        /// When it started: it is running (`None`: CUPTI gave no start time, or no
        /// record at all).
        since_ns: Option<u64>,
        /// When it was launched (the launch call), when the thread's ring held it.
        launched_ns: Option<u64>,
        /// CUPTI returned a record of it at the forced flush (`false`: only the launch
        /// was seen: not started, or its record not delivered).
        recorded: bool,
    },
    /// Waiting in an NCCL collective (`index` counts from 1 on its NCCL stream).
    Collective {
        communicator: usize,
        index: usize,
        label: String,
        name: String,
        device: u32,
        stream: u32,
        since_ns: Option<u64>,
    },
    /// No GPU work in flight: the host side stopped launching.
    HostStopped {
        last_launch_ns: Option<u64>,
        last_call: Option<String>,
        blocked_in: Option<String>,
        last_end_ns: Option<u64>,
    },
    /// No hang record and nothing unfinished in its dump.
    Progressing { last_end_ns: Option<u64> },
}

fn is_nccl(name: &str) -> bool {
    NcclKernel::parse(name).is_some()
}

/// The first unfinished collective of the rank's NCCL streams: (communicator, index).
fn first_unfinished(f: &RankFacts) -> Option<(usize, usize)> {
    f.nccl
        .iter()
        .enumerate()
        .filter_map(|(j, s)| Some((j, s.collectives.iter().position(|c| c.unfinished())?)))
        .min_by_key(|&(j, k)| {
            let c = &f.nccl[j].collectives[k];
            (c.start_ns.unwrap_or(u64::MAX), c.correlation_id)
        })
}

pub fn rank_state(f: &RankFacts) -> RankState {
    let record = f.record.as_ref();
    if let Some(r) = record {
        let running = r
            .streams
            .iter()
            .flat_map(|s| s.running.iter().map(move |o| (s, o)))
            .filter(|(_, o)| o.kind == "kernel" && !is_nccl(&o.name))
            .min_by_key(|(_, o)| o.start_ns.unwrap_or(u64::MAX));
        if let Some((s, o)) = running {
            return RankState::ComputeKernel {
                name: o.name.clone(),
                device: s.device,
                stream: s.stream,
                since_ns: o.start_ns,
                launched_ns: o.launched_ns,
                recorded: true,
            };
        }
    }
    if let Some((j, k)) = first_unfinished(f) {
        let s = &f.nccl[j];
        let c = &s.collectives[k];
        return RankState::Collective {
            communicator: j + 1,
            index: k + 1,
            label: c.label(),
            name: c.name.clone(),
            device: s.device,
            stream: s.stream,
            since_ns: c.start_ns,
        };
    }
    if let Some(r) = record {
        let queued = r
            .streams
            .iter()
            .flat_map(|s| s.queued.iter().map(move |l| (s, l)))
            .find(|(_, l)| !l.name.as_deref().is_some_and(is_nccl));
        if let Some((s, l)) = queued {
            return RankState::ComputeKernel {
                name: l
                    .name
                    .clone()
                    .unwrap_or_else(|| "(a kernel cupmon could not name)".into()),
                device: s.device,
                stream: s.stream,
                since_ns: None,
                launched_ns: Some(l.launched_ns),
                recorded: false,
            };
        }
        let thread = r
            .threads
            .iter()
            .max_by_key(|t| t.last_call.as_ref().map_or(0, |c| c.at_ns));
        return RankState::HostStopped {
            last_launch_ns: r.last_launch_ns,
            last_call: thread
                .and_then(|t| t.last_call.as_ref())
                .map(|c| c.api.clone()),
            blocked_in: r
                .threads
                .iter()
                .find_map(|t| t.blocked_in.as_ref())
                .map(|c| c.api.clone()),
            last_end_ns: r.last_completed_end_ns.or(f.last_end_ns),
        };
    }
    RankState::Progressing {
        last_end_ns: f.last_end_ns,
    }
}
