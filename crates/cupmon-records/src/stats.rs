//! The summary `cupmon stats` prints: records per kind, chunks, time span, distinct
//! kernels, top kernels by total GPU time, dropped records.

use std::collections::HashMap;
use std::path::Path;

use crate::digest::{summarize, Digest};
use crate::dump::KernelNames;
use crate::dump::{Dump, DumpError, MetaFile};
use crate::nccl::CollectiveStats;
use crate::walk::{DecodeProgress, DecodeReport};
use crate::TimeRange;

/// GPU time of one kernel (by demangled name, all launches).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelStat {
    pub name: String,
    /// False when the name is a `kernel@0x...` placeholder.
    pub name_resolved: bool,
    pub launches: u64,
    /// Launches with both timestamps: unfinished kernels (`end = 0`) and kernels
    /// launched before collection (`start = 0`) count as launches but have no time.
    pub timed: u64,
    /// Sum of `end - start` over the timed launches.
    pub total_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl KernelStat {
    /// Mean duration over the timed launches (not all launches).
    pub fn mean_ns(&self) -> Option<f64> {
        (self.timed > 0).then(|| self.total_ns as f64 / self.timed as f64)
    }
}

/// What "GPU busy" means everywhere cupmon says it (`cupmon run`'s summary, `stats`,
/// `report`, the SQL views, the Parquet docs): one definition, so that one dump gives
/// one figure.
pub const GPU_BUSY: &str = "the time at least one kernel runs on the device, the union \
     of its kernels' intervals over all its streams (overlaps counted once); copies and \
     memsets are not counted (their bandwidth is shown apart)";

/// Summary of a dump.
#[derive(Debug, Clone, PartialEq)]
pub struct DumpStats {
    /// Counts per kind, chunks, warnings and dropped records.
    pub report: DecodeReport,
    /// Earliest non-zero start and latest end over all timed records on the session's
    /// clock, in ns.
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    /// Records on another clock that could not be converted to Unix ns (left out of
    /// everything else; `report.clock_converted` counts those that were converted).
    pub off_clock_records: u64,
    /// Distinct kernel names.
    pub distinct_kernels: usize,
    /// Kernels by total GPU time, largest first (at most `top` of them).
    pub top_kernels: Vec<KernelStat>,
    /// Memcpy bytes in total.
    pub memcpy_bytes: u64,
    /// The dump's meta, for the keys its writer added (cupmon's buffer and
    /// worker figures).
    pub meta: MetaFile,
    /// NCCL kernels' share of each device's kernel time, and the top collectives.
    pub collectives: CollectiveStats,
}

impl DumpStats {
    /// `last_ns - first_ns`.
    pub fn span_ns(&self) -> Option<u64> {
        Some(self.last_ns?.saturating_sub(self.first_ns?))
    }
}

/// Read the dump in `dir` and summarise it; `top` limits `top_kernels`.
pub fn dump_stats(
    dir: impl AsRef<Path>,
    top: usize,
    progress: impl FnMut(&DecodeProgress),
) -> Result<DumpStats, DumpError> {
    let dump = Dump::open(dir)?;
    dump_stats_slice(&dump, &TimeRange::default(), top, progress)
}

/// [`dump_stats`] of the records of `dump` that [`crate::walk_slice`] gives for
/// `range`, from the segments' digests where they stand for them ([`summarize`]).
pub fn dump_stats_slice(
    dump: &Dump,
    range: &TimeRange,
    top: usize,
    progress: impl FnMut(&DecodeProgress),
) -> Result<DumpStats, DumpError> {
    let summary = summarize(dump, range, progress)?;
    Ok(stats_of(dump, summary.report, &summary.digest, top))
}

/// The stats of a digest of `dump` (`report`: the walk's).
pub fn stats_of(dump: &Dump, report: DecodeReport, digest: &Digest, top: usize) -> DumpStats {
    // Several name pointers can carry the same name (one per module that loads it).
    let mut names = KernelNames::new(dump.kernel_names());
    let mut by_name: HashMap<String, KernelStat> = HashMap::new();
    let mut unresolved = 0;
    for s in &digest.kernels {
        let (name, resolved) = names.name(s.name_ptr);
        if !resolved {
            unresolved += s.launches;
        }
        let k = by_name
            .entry(name.to_owned())
            .or_insert_with(|| KernelStat {
                name: name.to_owned(),
                name_resolved: resolved,
                launches: 0,
                timed: 0,
                total_ns: 0,
                min_ns: u64::MAX,
                max_ns: 0,
            });
        k.launches += s.launches;
        k.timed += s.timed;
        k.total_ns += s.total_ns;
        k.min_ns = k.min_ns.min(s.min_ns.unwrap_or(u64::MAX));
        k.max_ns = k.max_ns.max(s.max_ns);
    }
    let distinct_kernels = by_name.len();
    let mut top_kernels: Vec<KernelStat> = by_name.into_values().collect();
    for k in &mut top_kernels {
        if k.min_ns == u64::MAX {
            k.min_ns = 0;
        }
    }
    top_kernels.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    top_kernels.truncate(top);
    let off_clock_records = report.off_clock;
    let mut report = report;
    report.unresolved_kernel_names = unresolved;
    let mut collectives = digest.collectives.clone();
    collectives.collectives.truncate(top);
    DumpStats {
        report,
        first_ns: digest.first_ns,
        last_ns: digest.last_ns,
        off_clock_records,
        distinct_kernels,
        top_kernels,
        memcpy_bytes: digest.memcpy_bytes,
        meta: dump.meta().clone(),
        collectives,
    }
}
