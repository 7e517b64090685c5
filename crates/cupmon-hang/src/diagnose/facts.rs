//! What one rank's dump and hang records say: its NCCL streams' collectives in launch
//! order (from every kernel record, plus the launches its last hang record saw with no
//! record), its last completed operation, and its last hang record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cupmon_records::nccl::NcclKernel;
use cupmon_records::{walk_records, Dump, Record};
use serde::Serialize;

use crate::{read_hang_records, HangError, HangRecord};

/// One NCCL kernel of a rank.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Collective {
    /// The kernel's name as recorded (mangled).
    pub name: String,
    /// The collective (`AllReduce`, ...) and type its name gives.
    pub collective: Option<String>,
    pub dtype: Option<String>,
    pub grid: Option<[i32; 3]>,
    pub correlation_id: u32,
    pub start_ns: Option<u64>,
    pub end_ns: Option<u64>,
    /// Launched, with no activity record at the hang record (not started).
    pub queued: bool,
}

impl Collective {
    /// What must agree across ranks: the kernel and its grid (NCCL sizes the grid,
    /// its channels, by the message).
    pub fn same_as(&self, other: &Collective) -> bool {
        self.name == other.name
            && (self.grid.is_none() || other.grid.is_none() || self.grid == other.grid)
    }

    /// Launched and not ended.
    pub fn unfinished(&self) -> bool {
        self.end_ns.is_none()
    }

    /// `AllReduce f32` (or the name when it is not one NCCL's schemes tell).
    pub fn label(&self) -> String {
        match (&self.collective, &self.dtype) {
            (Some(c), Some(t)) => format!("{c} {t}"),
            (Some(c), None) => c.clone(),
            _ => cupmon_records::demangle(&self.name).into_owned(),
        }
    }
}

/// One NCCL stream of a rank (a communicator on a device as NCCL launches it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NcclStream {
    pub device: u32,
    pub stream: u32,
    pub collectives: Vec<Collective>,
}

/// One rank's facts.
#[derive(Debug, Clone, Serialize)]
pub struct RankFacts {
    pub rank: Option<i64>,
    pub pid: Option<i64>,
    pub dump: PathBuf,
    /// Its NCCL streams, by their first collective's launch order.
    pub nccl: Vec<NcclStream>,
    /// The end of its last completed kernel, copy or memset.
    pub last_end_ns: Option<u64>,
    /// Operations recorded.
    pub operations: u64,
    /// Its last hang record, and where it is.
    pub record: Option<HangRecord>,
    pub record_path: Option<PathBuf>,
    /// What could not be read.
    pub warnings: Vec<String>,
}

fn op_times(start: u64, end: u64) -> (Option<u64>, Option<u64>) {
    ((start > 0).then_some(start), (end > 0).then_some(end))
}

/// Reads one dump: every record (for the collectives) and its hang records.
pub fn read_rank(dir: &Path) -> Result<RankFacts, HangError> {
    let dump = Dump::open(dir).map_err(|e| HangError::Dump {
        path: dir.to_owned(),
        problem: e.to_string(),
    })?;
    let names = dump.kernel_names();
    let mut streams: BTreeMap<(u32, u32), NcclStream> = BTreeMap::new();
    let mut last_end = 0u64;
    let mut operations = 0u64;
    let report = walk_records(
        &dump,
        |_| {},
        |_, _, record| {
            let (end, is_op) = match record {
                Record::Kernel(k) => (k.end, true),
                Record::Memcpy(m) => (m.end, true),
                Record::Memset(m) => (m.end, true),
                _ => (0, false),
            };
            if is_op {
                operations += 1;
                last_end = last_end.max(end);
            }
            let Record::Kernel(k) = record else {
                return;
            };
            let Some(name) = names.get(k.name_ptr) else {
                return;
            };
            let Some(nccl) = NcclKernel::parse(name) else {
                return;
            };
            let (start_ns, end_ns) = op_times(k.start, k.end);
            streams
                .entry((k.device_id, k.stream_id))
                .or_insert_with(|| NcclStream {
                    device: k.device_id,
                    stream: k.stream_id,
                    collectives: Vec::new(),
                })
                .collectives
                .push(Collective {
                    name: name.to_owned(),
                    collective: nccl.collective.map(|c| c.value.to_owned()),
                    dtype: nccl.dtype.map(|c| c.value.to_owned()),
                    grid: Some([k.grid_x, k.grid_y, k.grid_z]),
                    correlation_id: k.correlation_id,
                    start_ns,
                    end_ns,
                    queued: false,
                });
        },
    )
    .map_err(|e| HangError::Dump {
        path: dir.to_owned(),
        problem: e.to_string(),
    })?;
    let mut warnings: Vec<String> = report.warnings.iter().map(|w| w.to_string()).collect();
    if report.retired.segments > 0 {
        warnings.push(format!(
            "{} segments were retired (--keep): its collectives before them are not counted, \
             so its sequence may start late",
            report.retired.segments
        ));
    }
    let (records, problems) = read_hang_records(dir);
    warnings.extend(problems.iter().map(ToString::to_string));
    let last = records.into_iter().last();
    if let Some((_, record)) = &last {
        add_queued(&mut streams, record);
    }
    let mut nccl: Vec<NcclStream> = streams.into_values().collect();
    for s in &mut nccl {
        s.collectives.sort_by_key(|c| c.correlation_id);
        // A kernel delivered twice (running at a forced flush, then complete) counts once.
        s.collectives.dedup_by(|b, a| {
            a.correlation_id == b.correlation_id && {
                if a.end_ns.is_none() {
                    a.end_ns = b.end_ns;
                }
                true
            }
        });
    }
    nccl.sort_by_key(|s| s.collectives.first().map(|c| c.correlation_id));
    Ok(RankFacts {
        rank: dump.rank(),
        pid: cupmon_records::dump::pid_in_dir_name(dir)
            .or_else(|| dump.meta().json().get("pid")?.as_i64()),
        dump: dir.to_owned(),
        nccl,
        last_end_ns: (last_end > 0).then_some(last_end),
        operations,
        record_path: last.as_ref().map(|(p, _)| p.clone()),
        record: last.map(|(_, r)| r),
        warnings,
    })
}

/// The NCCL launches the hang record saw queued (no record at all) join their stream.
fn add_queued(streams: &mut BTreeMap<(u32, u32), NcclStream>, record: &HangRecord) {
    for c in &record.communicators {
        let s = streams
            .entry((c.device, c.stream))
            .or_insert_with(|| NcclStream {
                device: c.device,
                stream: c.stream,
                collectives: Vec::new(),
            });
        for l in &c.queued {
            let Some(name) = &l.name else { continue };
            let nccl = NcclKernel::parse(name);
            s.collectives.push(Collective {
                name: name.clone(),
                collective: nccl.and_then(|n| n.collective).map(|c| c.value.to_owned()),
                dtype: nccl.and_then(|n| n.dtype).map(|c| c.value.to_owned()),
                grid: None,
                correlation_id: l.correlation_id,
                start_ns: None,
                end_ns: None,
                queued: true,
            });
        }
    }
}
