//! One process's part of the report, from one digest of its dump ([`summarize`]):
//! `cupmon stats`' own summary (every kernel kept), the timeline on the report's grid
//! (as `cupmon stats --timeline`), the NCCL kernels' timeline, kernel durations for
//! p50/p99, copies and streams.

use std::collections::HashMap;
use std::path::PathBuf;

use cupmon_records::digest::{summarize_on_grid, Summary};
use cupmon_records::stats_of;
use cupmon_records::{
    source_lines, DecodeProgress, Dump, DumpStats, KernelNames, LinesReport, TimeRange, Timeline,
    TimelineBuilder,
};

use crate::copies::CopyStats;
use crate::durations::Durations;
use crate::info::ProcessInfo;
use crate::streams::StreamBusy;
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
    /// GPU time by range name inside the windows (`crate::ranges`).
    pub ranges: Vec<cupmon_records::RangeTime>,
    /// Kernel time by the source line that launched it, when the dump has Python
    /// stacks (one more walk of the slice's records).
    pub lines: Option<LinesReport>,
    /// For a report on a period (`--from/--to`): the kernels launched in it, from
    /// the segments' launch counters; `None` for the whole dump (the meta's account).
    pub slice_launches: Option<cupmon_records::digest::SliceLaunches>,
}

impl ProcessData {
    /// Sum of the kernel time of all kernels (the share's denominator).
    pub fn kernel_ns(&self) -> u64 {
        self.stats.top_kernels.iter().map(|k| k.total_ns).sum()
    }
}

/// The label of a process: its rank (the meta's, else its dump's name,
/// `rank<R>-<pid>-...`), else its pid, else its directory's name.
pub fn label_of(info: &ProcessInfo, dump: &Dump) -> String {
    let rank = info
        .rank
        .clone()
        .or_else(|| dump.rank().map(|r| r.to_string()));
    match (&rank, info.pid) {
        (Some(r), _) => format!("rank {r}"),
        (None, Some(pid)) => format!("pid {pid}"),
        (None, None) => dump.dir().file_name().map_or_else(
            || "process".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        ),
    }
}

/// Gather `range` of `dump`'s part of the report on `grid`: from the segments'
/// digests where they stand for it, else from one walk of the records
/// ([`summarize`], as `cupmon stats` reads a dump).
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
    let bins = TimelineBuilder::new(grid.from_ns, grid.to_ns, bin)?;
    let (summary, timelines) = summarize_on_grid(dump, range, bins, progress).map_err(dump_err)?;
    let Summary {
        report,
        digest,
        launches,
        ..
    } = summary;
    let slice_launches = (!range.is_all()).then_some(launches);
    let stats = stats_of(dump, report, &digest, usize::MAX);
    // Named as `cupmon stats` names them (several pointers may carry one name).
    let mut resolver = KernelNames::new(dump.kernel_names());
    let mut durations: HashMap<String, Durations> = HashMap::new();
    for k in &digest.kernels {
        let (name, _) = resolver.name(k.name_ptr);
        durations
            .entry(name.to_owned())
            .or_default()
            .merge(&k.durations);
    }
    let info = ProcessInfo::from_meta(dump.meta());
    let (windows, window_errors) = find_windows(dump.dir());
    let ranges = crate::ranges::window_range_times(dump, range, &windows).map_err(dump_err)?;
    let lines = if dump.python_stacks().is_empty() {
        None
    } else {
        Some(source_lines(dump, range, |_| {}).map_err(dump_err)?)
    };
    Ok(ProcessData {
        label: label_of(&info, dump),
        dir: dump.dir().to_path_buf(),
        info,
        stats,
        durations,
        timeline: timelines.all,
        nccl: timelines.nccl,
        copies: digest.copies,
        streams: digest.streams,
        windows,
        window_errors,
        ranges,
        lines,
        slice_launches,
    })
}
