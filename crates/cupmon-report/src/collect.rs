//! One process's part of the report, in one walk of its dump: `cupmon stats`' own
//! summary ([`dump_stats_slice`], every kernel kept) and, from the same records, the
//! timeline on the report's grid ([`TimelineBuilder`], as `cupmon stats --timeline`),
//! the NCCL kernels' timeline, kernel durations for p50/p99, copies and streams.

use std::collections::HashMap;
use std::path::PathBuf;

use cupmon_records::nccl::NcclKernel;
use cupmon_records::{
    dump_stats_slice, DecodeProgress, Dump, DumpStats, KernelNames, Record, TimeRange, Timeline,
    TimelineBuilder,
};

use crate::copies::CopyStats;
use crate::durations::Durations;
use crate::info::ProcessInfo;
use crate::streams::{StreamBusy, StreamBusyBuilder};
use crate::windows::{find_windows, WindowError, WindowMark};
use crate::{Grid, ReportError};

/// Everything the report shows of one process.
#[derive(Debug, Clone)]
pub struct ProcessData {
    /// `rank 3`, or `pid 4242` outside a distributed job.
    pub label: String,
    pub dir: PathBuf,
    pub info: ProcessInfo,
    /// What `cupmon stats` prints for the same slice; `top_kernels` holds every kernel.
    pub stats: DumpStats,
    /// Kernel name -> durations of its timed launches.
    pub durations: HashMap<String, Durations>,
    pub timeline: Timeline,
    /// The same bins with NCCL kernels only: busy = time in collectives.
    pub nccl: Timeline,
    pub copies: CopyStats,
    pub streams: Vec<StreamBusy>,
    pub windows: Vec<WindowMark>,
    pub window_errors: Vec<WindowError>,
}

impl ProcessData {
    /// Sum of the kernel time of all kernels (the share's denominator).
    pub fn kernel_ns(&self) -> u64 {
        self.stats.top_kernels.iter().map(|k| k.total_ns).sum()
    }
}

/// The label of a process: its rank, else its pid, else its directory's name.
pub fn label_of(info: &ProcessInfo, dump: &Dump) -> String {
    match (&info.rank, info.pid) {
        (Some(r), _) => format!("rank {r}"),
        (None, Some(pid)) => format!("pid {pid}"),
        (None, None) => dump.dir().file_name().map_or_else(
            || "process".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        ),
    }
}

/// Walk `range` of `dump` once and gather its part of the report on `grid`.
pub fn collect(
    dump: &Dump,
    range: &TimeRange,
    grid: &Grid,
    progress: impl FnMut(&DecodeProgress),
) -> Result<ProcessData, ReportError> {
    let dump_err = |e| ReportError::Dump {
        dir: dump.dir().to_path_buf(),
        err: e,
    };
    let bin = std::time::Duration::from_nanos(grid.bin_ns);
    let mut timeline = TimelineBuilder::new(grid.from_ns, grid.to_ns, bin)?;
    let mut nccl = timeline.clone();
    let names = dump.kernel_names();
    let mut is_nccl: HashMap<u64, bool> = HashMap::new();
    let mut by_ptr: HashMap<u64, Durations> = HashMap::new();
    let mut copies = CopyStats::default();
    let mut streams = StreamBusyBuilder::default();
    let stats = dump_stats_slice(dump, range, usize::MAX, progress, |r| {
        timeline.add(r);
        match r {
            Record::Kernel(k) => {
                let collective = *is_nccl.entry(k.name_ptr).or_insert_with(|| {
                    names
                        .get(k.name_ptr)
                        .is_some_and(|n| NcclKernel::parse(n).is_some())
                });
                if collective {
                    nccl.add(r);
                }
                // As `cupmon stats` times a launch.
                if k.start != 0 && k.end >= k.start {
                    by_ptr.entry(k.name_ptr).or_default().add(k.end - k.start);
                }
                streams.add(k);
            }
            Record::Memcpy(m) => copies.add(m),
            _ => {}
        }
    })
    .map_err(dump_err)?;
    copies.sort();
    // Named as `cupmon stats` names them (several pointers may carry one name).
    let mut resolver = KernelNames::new(names);
    let mut durations: HashMap<String, Durations> = HashMap::new();
    for (ptr, d) in by_ptr {
        let (name, _) = resolver.name(ptr);
        durations.entry(name.to_owned()).or_default().merge(&d);
    }
    let info = ProcessInfo::from_meta(dump.meta());
    let (windows, window_errors) = find_windows(dump.dir());
    let dropped = stats.report.dropped_records;
    Ok(ProcessData {
        label: label_of(&info, dump),
        dir: dump.dir().to_path_buf(),
        info,
        stats,
        durations,
        timeline: timeline.finish(dropped),
        nccl: nccl.finish(dropped),
        copies,
        streams: streams.finish(),
        windows,
        window_errors,
    })
}
