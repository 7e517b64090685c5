//! Exporting one dump: every record through `walk_records` into the datasets'
//! sinks, then the `dumps` row that records what was taken.

use std::path::{Path, PathBuf};

use cupmon_records::{walk_records, DecodeProgress, DecodeReport, Dump, KernelNames, Record};
use parquet::file::metadata::KeyValue;
use rustc_hash::FxHashMap;

use crate::columns::{Scratch, Strings, Sym};
use crate::correlations::Correlations;
use crate::datasets::{ApiRows, DumpRows, KernelRows, MemcpyRows, MemsetRows};
use crate::dump_info::{dump_row, run_info};
use crate::error::ExportError;
use crate::partition::hour_of;
use crate::run_info::RunInfo;
use crate::sink::{DatasetTotals, Sink};
use crate::state::{earlier_exports, plan, ExportState, Plan, STATE_KEY};

/// Which record datasets to write (`dumps` is always written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds {
    pub kernel: bool,
    pub memcpy: bool,
    pub memset: bool,
    pub api: bool,
}

impl Default for Kinds {
    fn default() -> Self {
        Self {
            kernel: true,
            memcpy: true,
            memset: true,
            api: true,
        }
    }
}

/// An export's settings (the CLI's arguments, checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    pub out: PathBuf,
    pub kinds: Kinds,
    /// Rows whose start is in `[from_ns, to_ns)` (Unix ns); `None`: unbounded.
    pub from_ns: Option<i64>,
    pub to_ns: Option<i64>,
    pub job: Option<String>,
    /// The host column (default: the dump's `hostname`, else `default_host`).
    pub host: Option<String>,
    pub default_host: String,
}

/// What the export of one dump wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct DumpExport {
    pub dir: PathBuf,
    pub run: RunInfo,
    /// `(dataset, what was written)`, datasets in [`crate::DATASETS`] order.
    pub datasets: Vec<(&'static str, DatasetTotals)>,
    pub report: DecodeReport,
    /// Chunks skipped because an earlier export read them.
    pub chunks_already_exported: u64,
    /// Rows left out by `--from/--to`.
    pub rows_outside_slice: u64,
}

/// A dump's sinks, one per dataset being written.
#[derive(Debug)]
struct Sinks {
    kernels: Option<Sink<KernelRows>>,
    memcpy: Option<Sink<MemcpyRows>>,
    memset: Option<Sink<MemsetRows>>,
    api: Option<Sink<ApiRows>>,
}

/// Where a dump's rows are while the walk goes on.
#[derive(Debug, Default)]
struct Walk {
    strings: Strings,
    /// Name pointer -> (name, resolved).
    names: FxHashMap<u64, (Sym, bool)>,
    correlations: Correlations,
    scratch: Scratch,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
    /// First and last chunk read.
    chunks: Option<(u64, u64)>,
    last_skipped: Option<u64>,
    skipped_chunks: u64,
    outside: u64,
    unresolved: u64,
    error: Option<ExportError>,
}

/// Export the dump in `dir` into `opts.out`.
pub fn export_dump(
    dir: &Path,
    opts: &ExportOptions,
    progress: impl FnMut(&DecodeProgress),
) -> Result<DumpExport, ExportError> {
    let dump_error = |source| ExportError::Dump {
        dir: dir.to_path_buf(),
        source,
    };
    let dump = Dump::open(dir).map_err(dump_error)?;
    let run = run_info(&dump, opts.job.as_deref(), opts.host.as_deref(), &opts.default_host);
    let stem = file_stem(&run);
    let session_start = dump.meta().session_start_unix_ns();
    let earlier = earlier_exports(&opts.out, &stem)?;
    if let Some(other) = earlier
        .iter()
        .find(|e| e.session_start_unix_ns != session_start)
    {
        let t = |v: Option<u64>| v.map_or_else(|| "unknown".to_owned(), |v| v.to_string());
        return Err(ExportError::SameName {
            dir: dir.to_path_buf(),
            out: opts.out.clone(),
            stem,
            other_start: t(other.session_start_unix_ns),
            this_start: t(session_start),
        });
    }
    let seq = match (opts.from_ns, opts.to_ns) {
        (None, None) => None,
        (from, to) => Some(slice_seq(from, to)),
    };
    let start_chunk = match plan(&earlier, seq.as_deref().unwrap_or(""), opts.from_ns, opts.to_ns) {
        Plan::From(c) => c,
        Plan::Overlaps(e) => {
            return Err(ExportError::Overlap {
                dir: dir.to_path_buf(),
                out: opts.out.clone(),
                existing: format!("{} in files {stem}.{}.parquet", e.describe(), e.seq),
                new: describe_slice(opts.from_ns, opts.to_ns),
            })
        }
    };
    let seq = seq.unwrap_or_else(|| format!("{start_chunk:010}"));
    let file_name = format!("{stem}.{seq}.parquet");
    let run_values = run.constants();
    let meta = || vec![KeyValue::new("cupmon.dump".to_owned(), dir.display().to_string())];
    let k = opts.kinds;
    let sink = |on: bool| on.then(|| (opts.out.as_path(), file_name.clone(), run_values.clone(), meta()));
    let mut sinks = Sinks {
        kernels: sink(k.kernel).map(Sink::from_args),
        memcpy: sink(k.memcpy).map(Sink::from_args),
        memset: sink(k.memset).map(Sink::from_args),
        api: sink(k.api).map(Sink::from_args),
    };
    let mut w = Walk::default();
    let mut kernel_names = KernelNames::new(dump.kernel_names());
    let annotations = dump.user_annotations();
    let (from, to) = (opts.from_ns.unwrap_or(i64::MIN), opts.to_ns.unwrap_or(i64::MAX));
    let mut report = walk_records(&dump, progress, |chunk, _, record| {
        if w.error.is_some() {
            return;
        }
        if chunk < start_chunk {
            if w.last_skipped != Some(chunk) {
                w.last_skipped = Some(chunk);
                w.skipped_chunks += 1;
            }
            return;
        }
        if let Err(e) = w.record(chunk, record, (from, to), &mut sinks, &mut kernel_names, annotations) {
            w.error = Some(e);
        }
    })
    .map_err(dump_error)?;
    if let Some(e) = w.error.take() {
        return Err(e);
    }
    report.unresolved_kernel_names = w.unresolved;
    let Walk {
        strings,
        correlations,
        mut scratch,
        ..
    } = w;
    let mut datasets = Vec::new();
    macro_rules! finish {
        ($field:ident) => {
            if let Some(sink) = sinks.$field.take() {
                datasets.push((
                    sink_name(&sink),
                    sink.finish(&strings, &correlations, &mut scratch)?,
                ));
            }
        };
    }
    finish!(kernels);
    finish!(memcpy);
    finish!(memset);
    finish!(api);
    let (first_chunk, end_chunk) = w.chunks.map_or((start_chunk, start_chunk), |(a, b)| (a, b + 1));
    let rows = |name: &str| {
        datasets
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, t)| t.rows as i64)
    };
    let new_chunks = w.chunks.is_some();
    // A whole-dump export that found nothing new records nothing: the next one
    // starts where this one would have.
    if new_chunks || seq_is_slice(&seq) {
        let mut row = dump_row(&dump, &report);
        row.first_ns = w.first_ns;
        row.last_ns = w.last_ns;
        row.export_seq = seq.clone();
        row.first_chunk = first_chunk as i64;
        row.end_chunk = end_chunk as i64;
        row.from_ns = opts.from_ns;
        row.to_ns = opts.to_ns;
        row.kernels = rows("kernels");
        row.memcpy = rows("memcpy");
        row.memset = rows("memset");
        row.api = rows("api");
        row.records = report.records as i64;
        let state = ExportState {
            seq: seq.clone(),
            session_start_unix_ns: session_start,
            first_chunk,
            end_chunk,
            from_ns: opts.from_ns,
            to_ns: opts.to_ns,
        };
        let mut extra = meta();
        extra.push(KeyValue::new(STATE_KEY.to_owned(), state.to_json()));
        let mut dumps: Sink<DumpRows> = Sink::new(&opts.out, file_name, run_values, extra);
        let mut strings = strings;
        let hour = hour_of(row.time_ns);
        dumps.rows(hour).push(&row, &mut strings);
        dumps.pushed(&strings, &correlations, &mut scratch)?;
        datasets.push(("dumps", dumps.finish(&strings, &correlations, &mut scratch)?));
    }
    Ok(DumpExport {
        dir: dir.to_path_buf(),
        run,
        datasets,
        report,
        chunks_already_exported: w.skipped_chunks,
        rows_outside_slice: w.outside,
    })
}

fn sink_name<R: crate::table::Rows>(_: &Sink<R>) -> &'static str {
    R::SPEC.name
}

/// `<host>.r<rank>.p<pid>`, the host made safe for a file name.
fn file_stem(run: &RunInfo) -> String {
    let host: String = run
        .host
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-_".contains(c) { c } else { '_' })
        .collect();
    RunInfo {
        host,
        ..run.clone()
    }
    .file_stem()
}

/// The `<seq>` of a slice's files: `s<from>-<to>` in Unix ns, an open end empty.
fn slice_seq(from: Option<i64>, to: Option<i64>) -> String {
    let t = |v: Option<i64>| v.map_or_else(String::new, |v| v.to_string());
    format!("s{}-{}", t(from), t(to))
}

fn seq_is_slice(seq: &str) -> bool {
    seq.starts_with('s')
}

fn describe_slice(from: Option<i64>, to: Option<i64>) -> String {
    match (from, to) {
        (None, None) => "the whole dump".to_owned(),
        _ => {
            let t = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
            format!("[{}, {}) Unix ns", t(from), t(to))
        }
    }
}

impl Walk {
    #[inline]
    fn record(
        &mut self,
        chunk: u64,
        record: &Record,
        (from, to): (i64, i64),
        sinks: &mut Sinks,
        names: &mut KernelNames<'_>,
        annotations: &std::collections::BTreeMap<u64, String>,
    ) -> Result<(), ExportError> {
        self.chunks = Some(match self.chunks {
            Some((a, b)) => (a.min(chunk), b.max(chunk)),
            None => (chunk, chunk),
        });
        let (start, end) = match record {
            Record::Kernel(r) => (r.start, r.end),
            Record::Memcpy(r) => (r.start, r.end),
            Record::Memset(r) => (r.start, r.end),
            Record::Api(r) => (r.start, r.end),
            Record::ExternalCorrelation(r) => {
                self.correlations.add(r, annotations, &mut self.strings);
                return Ok(());
            }
            _ => return Ok(()),
        };
        let t = start as i64;
        if t < from || t >= to {
            self.outside += 1;
            return Ok(());
        }
        let hour = hour_of(t);
        let pushed = match record {
            Record::Kernel(r) => sinks.kernels.as_mut().map(|s| {
                let (name, resolved) = match self.names.get(&r.name_ptr) {
                    Some(&known) => known,
                    None => {
                        let (name, resolved) = names.name(r.name_ptr);
                        let known = (self.strings.intern(name), resolved);
                        self.names.insert(r.name_ptr, known);
                        known
                    }
                };
                self.unresolved += u64::from(!resolved);
                s.rows(hour).push(r, name);
                s.pushed(&self.strings, &self.correlations, &mut self.scratch)
            }),
            Record::Memcpy(r) => sinks.memcpy.as_mut().map(|s| {
                s.rows(hour).push(r, &mut self.strings);
                s.pushed(&self.strings, &self.correlations, &mut self.scratch)
            }),
            Record::Memset(r) => sinks.memset.as_mut().map(|s| {
                s.rows(hour).push(r, &mut self.strings);
                s.pushed(&self.strings, &self.correlations, &mut self.scratch)
            }),
            Record::Api(r) => sinks.api.as_mut().map(|s| {
                s.rows(hour).push(r, &mut self.strings);
                s.pushed(&self.strings, &self.correlations, &mut self.scratch)
            }),
            _ => None,
        };
        let Some(result) = pushed else { return Ok(()) };
        result?;
        if start != 0 {
            self.first_ns = Some(self.first_ns.map_or(t, |f| f.min(t)));
        }
        if end >= start && start != 0 {
            let e = end as i64;
            self.last_ns = Some(self.last_ns.map_or(e, |l| l.max(e)));
        }
        Ok(())
    }
}
