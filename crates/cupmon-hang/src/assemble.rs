//! A hang record from the worker's streams and the launching threads' rings.
//!
//! CUPTI's callbacks see launches with their correlation ids; activity records arrive
//! when the work completes (or, at a forced flush, when it has started). So a launch
//! is in flight when no record answered it: its stream (learned from a completed
//! launch of the same stream handle) completed nothing with a later correlation id,
//! and no running record carries its id. A launch whose stream cannot be told is in
//! flight when it came after every completion of every stream.

use std::collections::{HashMap, HashSet};

use crate::record::{Call, Communicator, HangRecord, Launched, Op, StreamState, ThreadState};
use crate::{StreamView, Trigger, FORMAT};

/// One launch a thread's ring kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostLaunch {
    pub correlation_id: u32,
    pub api: String,
    pub unix_ns: u64,
    /// The stream handle of the call; 0: unknown.
    pub stream_handle: u64,
    /// A key for the kernel's name, resolved only for launches in flight.
    pub symbol: u64,
}

/// One launching thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostThread {
    pub tid: u64,
    pub launch_count: u64,
    /// Oldest first.
    pub launches: Vec<HostLaunch>,
    pub blocked_in: Option<Call>,
    pub last_sync: Option<Call>,
}

/// Everything a record is made of.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub trigger: Trigger,
    pub detail: String,
    pub written_ns: u64,
    pub pid: u32,
    pub rank: Option<i64>,
    pub last_progress_ns: Option<u64>,
    pub last_completed_end_ns: Option<u64>,
    pub last_launch_ns: Option<u64>,
    pub streams: Vec<StreamView>,
    pub threads: Vec<HostThread>,
    pub notes: Vec<String>,
}

/// The record. `resolve` names a launch's symbol (called for launches in flight only).
pub fn assemble(s: Snapshot, resolve: &dyn Fn(u64) -> Option<String>) -> HangRecord {
    // Stream handles, learned from launches a record answered.
    let mut answered: HashMap<u32, usize> = HashMap::new();
    for (i, v) in s.streams.iter().enumerate() {
        for op in v.recent.iter().chain(&v.running) {
            answered.insert(op.correlation_id, i);
        }
    }
    let mut handle_stream: HashMap<u64, usize> = HashMap::new();
    for l in s.threads.iter().flat_map(|t| &t.launches) {
        if l.stream_handle != 0 {
            if let Some(&i) = answered.get(&l.correlation_id) {
                handle_stream.insert(l.stream_handle, i);
            }
        }
    }
    let running: HashSet<u32> = s
        .streams
        .iter()
        .flat_map(|v| v.running.iter().map(|o| o.correlation_id))
        .collect();
    let max_done = s
        .streams
        .iter()
        .map(|v| v.max_done_correlation)
        .max()
        .unwrap_or(0);
    // Unfinished operations' launch times, from the rings (CUPTI's forced flush may
    // give them no start time).
    let launched_at: HashMap<u32, u64> = s
        .threads
        .iter()
        .flat_map(|t| &t.launches)
        .filter(|l| running.contains(&l.correlation_id))
        .map(|l| (l.correlation_id, l.unix_ns))
        .collect();
    let with_launch = |ops: &[Op]| -> Vec<Op> {
        ops.iter()
            .map(|o| Op {
                launched_ns: o
                    .launched_ns
                    .or(launched_at.get(&o.correlation_id).copied()),
                ..o.clone()
            })
            .collect()
    };
    let mut queued: Vec<Vec<Launched>> = vec![Vec::new(); s.streams.len()];
    let mut unknown_stream: Vec<Launched> = Vec::new();
    for t in &s.threads {
        for l in &t.launches {
            if running.contains(&l.correlation_id) || answered.contains_key(&l.correlation_id) {
                continue;
            }
            let stream = handle_stream.get(&l.stream_handle).copied();
            let in_flight = match stream {
                Some(i) => l.correlation_id > s.streams[i].max_done_correlation,
                None => l.correlation_id > max_done,
            };
            if !in_flight {
                continue;
            }
            let launched = Launched {
                name: resolve(l.symbol),
                correlation_id: l.correlation_id,
                launched_ns: l.unix_ns,
                api: l.api.clone(),
                tid: t.tid,
            };
            match stream {
                Some(i) => queued[i].push(launched),
                None => unknown_stream.push(launched),
            }
        }
    }
    for q in queued.iter_mut().chain([&mut unknown_stream]) {
        q.sort_by_key(|l| l.correlation_id);
    }
    let nccl_name = |l: &Launched| {
        l.name
            .as_deref()
            .is_some_and(|n| cupmon_records::nccl::NcclKernel::parse(n).is_some())
    };
    let communicators = s
        .streams
        .iter()
        .zip(&queued)
        .filter(|(v, _)| v.nccl)
        .map(|(v, q)| Communicator {
            device: v.device,
            stream: v.stream,
            completed: v.nccl_completed,
            running: with_launch(&v.running)
                .into_iter()
                .filter(|o| cupmon_records::nccl::NcclKernel::parse(&o.name).is_some())
                .collect(),
            queued: q.iter().filter(|l| nccl_name(l)).cloned().collect(),
            last_completed: v.nccl_recent.clone(),
        })
        .collect();
    let mut streams: Vec<StreamState> = s
        .streams
        .iter()
        .zip(queued)
        .map(|(v, q)| StreamState {
            device: Some(v.device),
            context: Some(v.context),
            stream: Some(v.stream),
            running: with_launch(&v.running),
            queued: q,
            recent: v.recent.clone(),
            completed: v.completed,
        })
        .collect();
    if !unknown_stream.is_empty() {
        streams.push(StreamState {
            device: None,
            context: None,
            stream: None,
            running: Vec::new(),
            queued: unknown_stream,
            recent: Vec::new(),
            completed: 0,
        });
    }
    let threads = s
        .threads
        .iter()
        .map(|t| {
            let last_launch = t.launches.last().map(|l| Call {
                api: l.api.clone(),
                at_ns: l.unix_ns,
            });
            let last_call = match (&t.blocked_in, last_launch, &t.last_sync) {
                (Some(b), _, _) => Some(b.clone()),
                (None, Some(l), Some(y)) => Some(if y.at_ns >= l.at_ns { y.clone() } else { l }),
                (None, l, y) => l.or_else(|| y.clone()),
            };
            ThreadState {
                tid: t.tid,
                launches: t.launch_count,
                last_call,
                blocked_in: t.blocked_in.clone(),
            }
        })
        .collect();
    HangRecord {
        format: FORMAT,
        trigger: s.trigger,
        detail: s.detail,
        written_ns: s.written_ns,
        pid: s.pid,
        rank: s.rank,
        last_progress_ns: s.last_progress_ns,
        last_completed_end_ns: s.last_completed_end_ns,
        last_launch_ns: s.last_launch_ns,
        streams,
        threads,
        communicators,
        notes: s.notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    fn op(corr: u32, end: Option<u64>) -> Op {
        Op {
            kind: "kernel".into(),
            name: "k".into(),
            correlation_id: corr,
            start_ns: Some(1),
            end_ns: end,
            launched_ns: None,
            grid: None,
            block: None,
            bytes: None,
        }
    }

    fn view(stream: u32, recent: Vec<Op>, running: Vec<Op>) -> StreamView {
        let max = recent.iter().map(|o| o.correlation_id).max().unwrap_or(0);
        StreamView {
            device: 0,
            context: 1,
            stream,
            completed: recent.len() as u64,
            recent,
            running,
            max_done_correlation: max,
            nccl: false,
            nccl_recent: Vec::new(),
            nccl_completed: 0,
        }
    }

    fn launch(corr: u32, handle: u64) -> HostLaunch {
        HostLaunch {
            correlation_id: corr,
            api: "cudaLaunchKernel".into(),
            unix_ns: u64::from(corr),
            stream_handle: handle,
            symbol: u64::from(corr),
        }
    }

    #[test]
    fn launches_no_record_answered_are_queued_on_their_stream() {
        let streams = vec![
            view(7, vec![op(1, Some(5)), op(3, Some(6))], vec![op(4, None)]),
            view(8, vec![op(2, Some(5)), op(9, Some(9))], vec![]),
        ];
        let threads = vec![HostThread {
            tid: 11,
            launch_count: 6,
            launches: [(1, 0xa), (2, 0xb), (3, 0xa), (4, 0xa), (5, 0xa), (6, 0xa)]
                .map(|(c, h)| launch(c, h))
                .to_vec(),
            blocked_in: Some(Call {
                api: "cudaStreamSynchronize".into(),
                at_ns: 7,
            }),
            last_sync: None,
        }];
        let record = assemble(
            Snapshot {
                trigger: Trigger::OnDemand,
                detail: String::new(),
                written_ns: 0,
                pid: 1,
                rank: None,
                last_progress_ns: None,
                last_completed_end_ns: None,
                last_launch_ns: None,
                streams,
                threads,
                notes: Vec::new(),
            },
            &|sym| Some(format!("kernel{sym}")),
        );
        let s7 = &record.streams[0];
        assert_eq!(s7.running.len(), 1);
        assert_eq!(
            s7.running[0].launched_ns,
            Some(4),
            "the unfinished kernel's launch time, from the ring"
        );
        let queued: Vec<u32> = s7.queued.iter().map(|l| l.correlation_id).collect();
        assert_eq!(
            queued,
            [5, 6],
            "behind the running kernel 4, on stream 7 by its handle"
        );
        assert_eq!(s7.queued[0].name.as_deref(), Some("kernel5"));
        assert!(record.streams[1].queued.is_empty());
        assert_eq!(record.streams.len(), 2, "no launch of an unknown stream");
        let t = &record.threads[0];
        assert_eq!(t.blocked_in.as_ref().unwrap().api, "cudaStreamSynchronize");
        assert_eq!(t.last_call.as_ref().unwrap().api, "cudaStreamSynchronize");
    }
}
