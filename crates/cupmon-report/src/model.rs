//! The report's data: every process's [`ProcessData`] on one [`Grid`], the kernels
//! of all processes together (top by total GPU time, with p50/p99), the copies, the
//! periods with the slowest one and the slowest ranks, and the hint for what to do next.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use cupmon_records::{DecodeProgress, Dump, TimeRange};

use crate::collect::{collect, ProcessData};
use crate::copies::CopyStats;
use crate::durations::Durations;
use crate::periods::{periods, Periods};
use crate::{Grid, ReportError};

/// What to report on.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The slice (`--from/--to/--last`), already resolved; all of each dump by default.
    pub range: TimeRange,
    /// The bin (`--bin`); `None`: about [`crate::grid::TARGET_BINS`] round bins.
    pub bin: Option<Duration>,
    /// How many kernels the kernel table lists.
    pub top: usize,
    /// How many dumps are read at once (at least 1).
    pub threads: usize,
}

/// A kernel of the kernel table, over all processes.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    pub name: String,
    pub name_resolved: bool,
    pub launches: u64,
    pub timed: u64,
    pub total_ns: u64,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    /// `total_ns` over the kernel time of all kernels.
    pub share: f64,
}

impl KernelRow {
    pub fn mean_ns(&self) -> Option<f64> {
        (self.timed > 0).then(|| self.total_ns as f64 / self.timed as f64)
    }
}

/// The slowest period and the process to look at in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    pub period: usize,
    /// The slowest rank of the period, else the process with the fewest kernels in it.
    pub process: usize,
    /// The slice to decode, whole seconds around the period.
    pub from_ns: u64,
    pub to_ns: u64,
}

#[derive(Debug, Clone)]
pub struct Report {
    /// What the report was made of (the command line's TARGET).
    pub target: String,
    pub range: TimeRange,
    pub grid: Grid,
    pub processes: Vec<ProcessData>,
    pub kernels: Vec<KernelRow>,
    pub distinct_kernels: usize,
    /// Kernel time of all kernels of all processes.
    pub kernel_ns: u64,
    pub copies: CopyStats,
    pub periods: Periods,
    pub hint: Option<Hint>,
    /// The compute straggler of the minutes of the slowest and worst periods
    /// ([`crate::stragglers`]), for two or more processes.
    pub stragglers: Option<cupmon_straggler::Analysis>,
    /// `cupmon diagnose`'s verdict, when a dump holds hang records.
    pub hang: Option<cupmon_hang::diagnose::Diagnosis>,
    /// GPU time by range name in the trace windows, all processes together.
    pub ranges: Vec<cupmon_records::RangeTime>,
}

/// Read every dump (`threads` at a time) and build the report. `span` is the first
/// and last record over all the dumps (see [`run_span`]); `progress(i, p)` says where
/// the walk of dump `i` is.
pub fn build_report(
    target: &str,
    dumps: &[Dump],
    span: Option<(u64, u64)>,
    options: &Options,
    progress: &(dyn Fn(usize, &DecodeProgress) + Sync),
) -> Result<Report, ReportError> {
    if dumps.is_empty() {
        return Err(ReportError::NoDumps(target.to_owned()));
    }
    let r = options.range;
    // As `Timeline` bins one dump: open ends at the first record and just after the last.
    let (first, last) = span.unwrap_or((r.from_ns.unwrap_or(0), r.from_ns.unwrap_or(0)));
    let from = r.from_ns.unwrap_or(first);
    let to = r.to_ns.unwrap_or(last.saturating_add(1)).max(from);
    let grid = Grid::new(from, to, options.bin)?;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<ProcessData, ReportError>>>> =
        Mutex::new((0..dumps.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..options.threads.clamp(1, dumps.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(dump) = dumps.get(i) else { break };
                let data = collect(dump, &options.range, &grid, |p| progress(i, p));
                results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(data);
            });
        }
    });
    let processes = results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.expect("every dump was read"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut report = assemble(target, options, grid, processes);
    let minutes = crate::stragglers::minutes_of_interest(&report);
    report.stragglers = crate::stragglers::analyse_minutes(dumps, &minutes, options.threads)?;
    // Only a run that hung pays for the diagnosis' walk of the records.
    let dirs: Vec<PathBuf> = dumps.iter().map(|d| d.dir().to_path_buf()).collect();
    if dirs
        .iter()
        .any(|d| !cupmon_hang::hang_record_paths(d).is_empty())
    {
        report.hang = cupmon_hang::diagnose::diagnose(&dirs).ok();
    }
    Ok(report)
}

/// First start and last end over all `dumps` (each from its time index).
pub fn run_span(dumps: &[Dump]) -> Result<Option<(u64, u64)>, ReportError> {
    let mut span: Option<(u64, u64)> = None;
    for d in dumps {
        let s = d.time_span().map_err(|err| ReportError::Dump {
            dir: d.dir().to_path_buf(),
            err,
        })?;
        if let Some((a, b)) = s.get() {
            span = Some(span.map_or((a, b), |(x, y)| (x.min(a), y.max(b))));
        }
    }
    Ok(span)
}

fn assemble(target: &str, options: &Options, grid: Grid, processes: Vec<ProcessData>) -> Report {
    let mut by_name: HashMap<&str, (KernelRow, Durations)> = HashMap::new();
    for p in &processes {
        for k in &p.stats.top_kernels {
            let (row, d) = by_name.entry(&k.name).or_insert_with(|| {
                let row = KernelRow {
                    name: k.name.clone(),
                    name_resolved: k.name_resolved,
                    launches: 0,
                    timed: 0,
                    total_ns: 0,
                    p50_ns: None,
                    p99_ns: None,
                    share: 0.0,
                };
                (row, Durations::new())
            });
            row.launches += k.launches;
            row.timed += k.timed;
            row.total_ns += k.total_ns;
            if let Some(own) = p.durations.get(&k.name) {
                d.merge(own);
            }
        }
    }
    let kernel_ns: u64 = processes.iter().map(ProcessData::kernel_ns).sum();
    let distinct_kernels = by_name.len();
    let mut kernels: Vec<KernelRow> = by_name
        .into_values()
        .map(|(mut row, d)| {
            row.p50_ns = d.quantile(0.5);
            row.p99_ns = d.quantile(0.99);
            row.share = if kernel_ns > 0 {
                row.total_ns as f64 / kernel_ns as f64
            } else {
                0.0
            };
            row
        })
        .collect();
    // As `cupmon stats` orders them.
    kernels.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    kernels.truncate(options.top);
    let mut copies = CopyStats::default();
    for (i, p) in processes.iter().enumerate() {
        copies.merge(&p.copies, i);
    }
    let periods = periods(&grid, &processes);
    let hint = periods.slowest_period.map(|i| {
        let p = &periods.periods[i];
        // The process with the fewest kernels in that period, among those that
        // recorded any: a launcher (torchrun's own process) has an empty dump, and a
        // command pointing at it would show nothing.
        let recorded = |j: &usize| {
            processes[*j]
                .stats
                .report
                .records_by_kind
                .values()
                .sum::<u64>()
                > 0
        };
        let process = p.slowest.unwrap_or_else(|| {
            (0..processes.len())
                .filter(recorded)
                .min_by_key(|&j| (p.processes[j].kernels, j))
                .unwrap_or(0)
        });
        const S: u64 = 1_000_000_000;
        Hint {
            period: i,
            process,
            from_ns: p.start_ns / S * S,
            to_ns: (p.start_ns + p.len_ns).div_ceil(S) * S,
        }
    });
    let ranges =
        cupmon_records::merge_range_times(processes.iter().flat_map(|p| p.ranges.iter().cloned()));
    Report {
        ranges,
        target: target.to_owned(),
        range: options.range,
        grid,
        processes,
        kernels,
        distinct_kernels,
        kernel_ns,
        copies,
        periods,
        hint,
        stragglers: None,
        hang: None,
    }
}
