//! What the monitor's worker keeps of each stream while it writes records: the last
//! completed operations, the ones still running at a forced flush, and the NCCL
//! kernels completed. One pass over each record it already reads; a stream is found
//! by a compare with the previous record's stream (records of a stream come in runs),
//! an NCCL name by a compare with the stream's previous kernel name.

use cupmon_records::nccl::NcclKernel;
use cupmon_records::{copy_kind_word, KernelNameTable, KernelRecord, Record};

use rustc_hash::FxHashMap;

use crate::Op;

/// Completed operations kept per stream, and NCCL kernels per NCCL stream.
pub const RECENT: usize = 8;
/// Operations kept running per stream (the oldest: the one the others wait behind).
pub const MAX_RUNNING: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kernel,
    Memcpy,
    Memset,
}

/// An operation as recorded (raw times, maybe on a foreign clock).
#[derive(Debug, Clone, Copy)]
struct Seen {
    kind: Kind,
    /// Kernel name pointer, or the copy kind.
    name: u64,
    correlation_id: u32,
    start: u64,
    end: u64,
    foreign: bool,
    grid: [i32; 3],
    block: [i32; 3],
    bytes: u64,
}

#[derive(Debug, Default)]
struct Ring {
    ops: Vec<Seen>,
    next: usize,
}

impl Ring {
    fn push(&mut self, op: Seen) {
        if self.ops.len() < RECENT {
            self.ops.push(op);
        } else {
            self.ops[self.next] = op;
        }
        self.next = (self.next + 1) % RECENT;
    }

    fn oldest_first(&self) -> impl Iterator<Item = &Seen> {
        let split = if self.ops.len() < RECENT {
            0
        } else {
            self.next
        };
        self.ops[split..].iter().chain(&self.ops[..split])
    }
}

#[derive(Debug)]
struct Tracked {
    device: u32,
    context: u32,
    stream: u32,
    recent: Ring,
    running: Vec<Seen>,
    completed: u64,
    max_done_correlation: u32,
    nccl_recent: Ring,
    nccl_completed: u64,
    last_name: u64,
    last_is_nccl: bool,
}

/// The per-stream state of one process.
#[derive(Debug, Default)]
pub struct StreamTracker {
    streams: Vec<Tracked>,
    last: usize,
    completed: u64,
    last_end: u64,
    nccl_by_name: FxHashMap<u64, bool>,
}

/// One stream's state, ready for a hang record.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamView {
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    pub recent: Vec<Op>,
    pub running: Vec<Op>,
    pub completed: u64,
    /// The largest correlation id completed on the stream (launches after it with
    /// this stream are in flight).
    pub max_done_correlation: u32,
    /// Whether NCCL kernels ran on it, and its NCCL kernels.
    pub nccl: bool,
    pub nccl_recent: Vec<Op>,
    pub nccl_completed: u64,
}

impl StreamTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Operations completed so far (grows while the GPU makes progress).
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// The end of the last completed operation (raw clock).
    pub fn last_end(&self) -> u64 {
        self.last_end
    }

    /// Take one record in (other kinds than kernels, copies and memsets are ignored).
    #[inline]
    pub fn add(&mut self, record: &Record, names: &KernelNameTable) {
        let (device, context, stream, seen) = match record {
            Record::Kernel(k) => (k.device_id, k.context_id, k.stream_id, kernel(k)),
            Record::Memcpy(m) => (
                m.device_id,
                m.context_id,
                m.stream_id,
                Seen {
                    kind: Kind::Memcpy,
                    name: u64::from(m.copy_kind),
                    correlation_id: m.correlation_id,
                    start: m.start,
                    end: m.end,
                    foreign: false,
                    grid: [0; 3],
                    block: [0; 3],
                    bytes: m.bytes,
                },
            ),
            Record::Memset(m) => (
                m.device_id,
                m.context_id,
                m.stream_id,
                Seen {
                    kind: Kind::Memset,
                    name: 0,
                    correlation_id: m.correlation_id,
                    start: m.start,
                    end: m.end,
                    foreign: false,
                    grid: [0; 3],
                    block: [0; 3],
                    bytes: m.bytes,
                },
            ),
            _ => return,
        };
        // Set here once for the three kinds.
        let seen = Seen {
            foreign: record.has_foreign_timestamp(),
            ..seen
        };
        let index = self.stream_index(device, context, stream);
        let is_nccl = seen.kind == Kind::Kernel && self.is_nccl(index, seen.name, names);
        let s = &mut self.streams[index];
        if seen.end == 0 {
            if s.running.len() < MAX_RUNNING {
                s.running.push(seen);
            }
            return;
        }
        // Operations of a stream end in launch order: those launched before this one
        // and reported running at a forced flush have ended since.
        s.running.retain(|r| r.correlation_id > seen.correlation_id);
        s.completed += 1;
        s.max_done_correlation = s.max_done_correlation.max(seen.correlation_id);
        s.recent.push(seen);
        if is_nccl {
            s.nccl_completed += 1;
            s.nccl_recent.push(seen);
        }
        self.completed += 1;
        if !seen.foreign {
            self.last_end = self.last_end.max(seen.end);
        }
    }

    fn stream_index(&mut self, device: u32, context: u32, stream: u32) -> usize {
        let same = |t: &Tracked| t.device == device && t.context == context && t.stream == stream;
        if self.streams.get(self.last).is_some_and(same) {
            return self.last;
        }
        let index = match self.streams.iter().position(same) {
            Some(i) => i,
            None => {
                self.streams.push(Tracked {
                    device,
                    context,
                    stream,
                    recent: Ring::default(),
                    running: Vec::new(),
                    completed: 0,
                    max_done_correlation: 0,
                    nccl_recent: Ring::default(),
                    nccl_completed: 0,
                    last_name: u64::MAX,
                    last_is_nccl: false,
                });
                self.streams.len() - 1
            }
        };
        self.last = index;
        index
    }

    fn is_nccl(&mut self, index: usize, name: u64, names: &KernelNameTable) -> bool {
        let s = &mut self.streams[index];
        if s.last_name == name {
            return s.last_is_nccl;
        }
        let nccl = *self.nccl_by_name.entry(name).or_insert_with(|| {
            names
                .get(name)
                .is_some_and(|n| NcclKernel::parse(n).is_some())
        });
        let s = &mut self.streams[index];
        s.last_name = name;
        s.last_is_nccl = nccl;
        nccl
    }

    /// Every stream's state, names resolved and times on the Unix clock (`to_unix`
    /// converts a foreign-clock time; `None`: it cannot).
    pub fn view(
        &self,
        names: &KernelNameTable,
        to_unix: &dyn Fn(u64) -> Option<u64>,
    ) -> Vec<StreamView> {
        let op = |s: &Seen| -> Op {
            let time = |t: u64| {
                if t == 0 {
                    None
                } else if s.foreign {
                    to_unix(t)
                } else {
                    Some(t)
                }
            };
            let (kind, name) = match s.kind {
                Kind::Kernel => (
                    "kernel",
                    names
                        .get(s.name)
                        .map_or_else(|| format!("kernel@{:#x}", s.name), str::to_owned),
                ),
                Kind::Memcpy => (
                    "memcpy",
                    format!("Memcpy {}", copy_kind_word(s.name).unwrap_or("?")),
                ),
                Kind::Memset => ("memset", "Memset".to_owned()),
            };
            let kernel = s.kind == Kind::Kernel;
            Op {
                kind: kind.to_owned(),
                name,
                correlation_id: s.correlation_id,
                start_ns: time(s.start),
                end_ns: time(s.end),
                launched_ns: None,
                grid: kernel.then_some(s.grid),
                block: kernel.then_some(s.block),
                bytes: (!kernel).then_some(s.bytes),
            }
        };
        self.streams
            .iter()
            .map(|t| StreamView {
                device: t.device,
                context: t.context,
                stream: t.stream,
                recent: t.recent.oldest_first().map(op).collect(),
                running: t.running.iter().map(op).collect(),
                completed: t.completed,
                max_done_correlation: t.max_done_correlation,
                nccl: t.nccl_completed > 0
                    || t.running.iter().any(|r| {
                        r.kind == Kind::Kernel && self.nccl_by_name.get(&r.name) == Some(&true)
                    }),
                nccl_recent: t.nccl_recent.oldest_first().map(op).collect(),
                nccl_completed: t.nccl_completed,
            })
            .collect()
    }
}

fn kernel(k: &KernelRecord) -> Seen {
    Seen {
        kind: Kind::Kernel,
        name: k.name_ptr,
        correlation_id: k.correlation_id,
        start: k.start,
        end: k.end,
        foreign: false,
        grid: [k.grid_x, k.grid_y, k.grid_z],
        block: [k.block_x, k.block_y, k.block_z],
        bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cupmon_records::ActivityKind;

    fn k(stream: u32, name: u64, corr: u32, start: u64, end: u64) -> Record {
        Record::Kernel(KernelRecord {
            kind: ActivityKind::CONCURRENT_KERNEL,
            stream_id: stream,
            name_ptr: name,
            correlation_id: corr,
            start,
            end,
            ..KernelRecord::default()
        })
    }

    #[test]
    fn a_stream_keeps_its_last_ops_and_a_running_kernel() {
        let mut names = KernelNameTable::new();
        names.insert(1, "_Z4gemmv");
        names.insert(
            2,
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        );
        let mut t = StreamTracker::new();
        for i in 0..20 {
            t.add(&k(7, 1, i, 100 + i as u64, 110 + i as u64), &names);
        }
        t.add(&k(13, 2, 30, 200, 210), &names);
        t.add(&k(13, 2, 31, 220, 0), &names);
        t.add(&k(7, 1, 32, 300, 0), &names);
        assert_eq!(t.completed(), 21);
        let view = t.view(&names, &|_| None);
        let s7 = view.iter().find(|s| s.stream == 7).unwrap();
        assert_eq!(s7.recent.len(), RECENT);
        assert_eq!(
            s7.recent.first().unwrap().correlation_id,
            12,
            "oldest kept first"
        );
        assert_eq!(s7.running.len(), 1);
        assert_eq!(s7.running[0].end_ns, None);
        assert!(!s7.nccl);
        let s13 = view.iter().find(|s| s.stream == 13).unwrap();
        assert!(s13.nccl);
        assert_eq!(s13.nccl_completed, 1);
        assert_eq!(s13.running[0].correlation_id, 31);
        // A later completion on the stream ends what ran before it.
        t.add(&k(7, 1, 40, 400, 410), &names);
        let view = t.view(&names, &|_| None);
        assert!(view
            .iter()
            .find(|s| s.stream == 7)
            .unwrap()
            .running
            .is_empty());
    }
}
