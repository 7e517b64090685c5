//! Exporting one dump: its records through `walk_slice` into a
//! [`RecordExport`], from the chunk where earlier exports stopped, then the
//! `dumps` row that records what this export took. Chunks are numbered over the
//! dump's whole history ([`chunk_base`]), so retired segments do not shift them.

use std::path::{Path, PathBuf};

use cupmon_records::{walk_slice_apart, DecodeProgress, DecodeReport, Dump, TimeRange};
use parquet::file::metadata::KeyValue;

use crate::chunk_numbers::chunk_base;
use crate::dump_info::{dump_row, run_info};
use crate::error::ExportError;
use crate::record_export::RecordExport;
use crate::run_info::RunInfo;
use crate::sink::DatasetTotals;
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
    /// Records the slice's walk gave that started before `--from` (they ran into
    /// the slice) and so are not its rows. Records wholly outside it are not read.
    pub rows_outside_slice: u64,
    /// Chunks the flight recorder retired after the last export and before this one
    /// could read them: their rows are in no export.
    pub chunks_retired_unread: u64,
    /// GPU ops CUPTI did not time (start 0), per dataset: left out, as traces leave
    /// them out, rather than rows at the Unix epoch.
    pub untimed_gpu_ops: std::collections::BTreeMap<&'static str, u64>,
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
    let run = run_info(
        &dump,
        opts.job.as_deref(),
        opts.host.as_deref(),
        &opts.default_host,
    );
    let stem = run.safe_file_stem();
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
    let slice = (opts.from_ns, opts.to_ns);
    let sliced = slice != (None, None);
    let slice_seq = sliced.then(|| slice_seq(slice));
    let base = chunk_base(&dump)?;
    let planned = match plan(
        &earlier,
        slice_seq.as_deref().unwrap_or(""),
        slice.0,
        slice.1,
    ) {
        Plan::From(c) => c,
        Plan::Overlaps(e) => {
            return Err(ExportError::Overlap {
                dir: dir.to_path_buf(),
                out: opts.out.clone(),
                existing: format!("{} in files {stem}.{}.parquet", e.describe(), e.seq),
                new: describe_slice(slice),
            })
        }
    };
    if base.uncounted_segments > 0 && planned > 0 {
        return Err(ExportError::UncountedSegments {
            dir: dir.to_path_buf(),
            out: opts.out.clone(),
            segments: base.uncounted_segments,
        });
    }
    // Chunks between the last export and the first live one were retired unread.
    let chunks_retired_unread = if planned > 0 {
        base.first_live.saturating_sub(planned)
    } else {
        0
    };
    let start_chunk = planned.max(base.first_live);
    let seq = slice_seq.unwrap_or_else(|| format!("{start_chunk:010}"));
    let extra = vec![KeyValue::new(
        "cupmon.dump".to_owned(),
        dir.display().to_string(),
    )];
    let mut export = RecordExport::new(
        &opts.out,
        &run,
        &seq,
        opts.kinds,
        slice,
        dump.kernel_names(),
        dump.user_annotations().map_err(dump_error)?,
        extra,
    );
    export.set_python_stacks(
        dump.python_stacks().clone(),
        session_start.map_or(0, |t| t as i64),
    );
    // A slice walks only the segments and frames its time index says can hold
    // rows of it: the walk gives the records overlapping it (and their external
    // correlations), of which the rows are those that start inside it.
    let range = time_range(slice);
    let mut skipped = (None, 0u64);
    // Both callbacks write rows: the records on the session's clock, then those
    // kept apart on their own (`off_clock`).
    let state = std::cell::RefCell::new((export, None::<ExportError>));
    let mut report = walk_slice_apart(
        &dump,
        &range,
        progress,
        |walked, _, record| {
            let (export, error) = &mut *state.borrow_mut();
            if error.is_some() {
                return;
            }
            let chunk = base.first_live + walked;
            if chunk < start_chunk {
                if skipped.0 != Some(chunk) {
                    skipped = (Some(chunk), skipped.1 + 1);
                }
                // Earlier exports wrote these rows, but their external correlation
                // records may name rows of the new chunks.
                if let cupmon_records::Record::ExternalCorrelation(r) = record {
                    export.correlate(r);
                }
                return;
            }
            if let Err(e) = export.record(chunk, record) {
                *error = Some(e);
            }
        },
        |w| {
            let (export, error) = &mut *state.borrow_mut();
            let chunk = base.first_live + w.number;
            if error.is_none() && chunk >= start_chunk {
                if let Err(e) = export.off_clock_record(chunk, w.stamp, &w.record) {
                    *error = Some(e);
                }
            }
        },
    )
    .map_err(dump_error)?;
    let (export, error) = state.into_inner();
    if let Some(e) = error {
        return Err(e);
    }
    // Bad lines of the annotation log that its index let opening the dump skip.
    report.warnings.extend(dump.annotation_warnings());
    // Refused or damaged stack files: their rows have no `stack_id`.
    report
        .warnings
        .extend(dump.python_stacks().warnings().iter().cloned());
    // A whole-dump export that found no new chunk records nothing: the next one
    // starts where this one would have.
    let totals = if export.chunks().is_some() || sliced {
        let (first_chunk, end_chunk) = export
            .chunks()
            .map_or((start_chunk, start_chunk), |(a, b)| (a, b + 1));
        let state = ExportState {
            seq: seq.clone(),
            session_start_unix_ns: session_start,
            first_chunk,
            end_chunk,
            from_ns: slice.0,
            to_ns: slice.1,
        };
        let mut row = dump_row(&dump, &report);
        row.export_seq = seq;
        row.first_chunk = first_chunk as i64;
        row.end_chunk = end_chunk as i64;
        row.from_ns = slice.0;
        row.to_ns = slice.1;
        row.records = report.records as i64;
        let kv = vec![KeyValue::new(STATE_KEY.to_owned(), state.to_json())];
        export.finish(Some((row, kv)))?
    } else {
        export.finish(None)?
    };
    report.unresolved_kernel_names = totals.unresolved;
    Ok(DumpExport {
        dir: dir.to_path_buf(),
        run,
        rows_outside_slice: totals.outside,
        untimed_gpu_ops: totals.untimed.clone(),
        datasets: totals.datasets,
        report,
        chunks_already_exported: skipped.1,
        chunks_retired_unread,
    })
}

/// The slice `[from, to)` as the walk's range: the rows' start times are Unix ns,
/// never negative, so a negative `from` bounds nothing and a negative `to` keeps
/// nothing.
fn time_range((from, to): (Option<i64>, Option<i64>)) -> TimeRange {
    TimeRange::new(
        from.and_then(|v| u64::try_from(v).ok()),
        to.map(|v| u64::try_from(v).unwrap_or(0)),
    )
}

/// The `<seq>` of a slice's files: `s<from>-<to>` in Unix ns, an open end empty.
fn slice_seq((from, to): (Option<i64>, Option<i64>)) -> String {
    let t = |v: Option<i64>| v.map_or_else(String::new, |v| v.to_string());
    format!("s{}-{}", t(from), t(to))
}

fn describe_slice((from, to): (Option<i64>, Option<i64>)) -> String {
    let t = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    format!("[{}, {}) Unix ns", t(from), t(to))
}
