//! `cupmon export-parquet TARGET... -o OUT`: dumps as Parquet datasets.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cupmon_config::time_spec::TimeSpec;
use cupmon_parquet::{export_dump, write_sql, DumpExport, ExportError, ExportOptions};
use cupmon_records::dump::META_FILE;
use cupmon_records::Dump;

use crate::cli::ExportParquetArgs;
use crate::exit::BadInput;
use crate::progress::Progress;

pub fn run(args: &ExportParquetArgs) -> Result<i32> {
    let dumps = dumps_of(&args.targets)?;
    check_out(&args.output, &dumps)?;
    // Every dump's slice before anything is written: a bad --from names its dump.
    let slices = dumps
        .iter()
        .map(|dir| slice_of(dir, args))
        .collect::<Result<Vec<_>>>()?;
    std::fs::create_dir_all(&args.output)
        .map_err(|e| BadInput(format!("{}: cannot create: {e}", args.output.display())))?;
    let opts = ExportOptions {
        out: args.output.clone(),
        kinds: args.kinds,
        from_ns: None,
        to_ns: None,
        job: args.job.clone(),
        host: args.host.clone(),
        default_host: this_host(),
    };
    let sizes: Vec<u64> = dumps.iter().map(|d| Progress::dump_bytes(d)).collect();
    let mut progress = Progress::bytes("exporting", sizes.iter().sum());
    let mut done = 0;
    let mut exports = Vec::new();
    for ((dir, slice), size) in dumps.iter().zip(&slices).zip(&sizes) {
        let Some((from_ns, to_ns)) = *slice else {
            eprintln!(
                "cupmon: {}: no timed records, so nothing in a slice counted from them (skipped)",
                dir.display()
            );
            done += size;
            continue;
        };
        let opts = ExportOptions {
            from_ns,
            to_ns,
            ..opts.clone()
        };
        let result = export_dump(dir, &opts, |p| progress.update(done + p.bytes_read));
        if result.is_err() {
            progress.finish();
        }
        exports.push(result.map_err(export_error)?);
        done += size;
    }
    progress.finish();
    for export in &exports {
        if !export.report.warnings.is_empty() || export.report.unresolved_kernel_names > 0 {
            eprintln!("cupmon: {}:", export.dir.display());
        }
        super::decode::print_report(&export.report);
    }
    write_sql(&args.output).map_err(export_error)?;
    print_summary(&args.output, &exports);
    Ok(0)
}

/// `--from/--to/--last` resolved against the dump in `dir` (relative forms count from
/// its own first record), as the Unix-ns bounds of the rows' start times. `None`: a
/// slice counted from the dump's records, of a dump without timed records (the
/// launcher of a `cupmon run` that never used CUDA): nothing to export, not an error,
/// so that `--last 1h` over a run directory works.
fn slice_of(dir: &Path, args: &ExportParquetArgs) -> Result<Option<(Option<i64>, Option<i64>)>> {
    if !args.slice.given() {
        return Ok(Some((None, None)));
    }
    let dump = Dump::open(dir).with_context(|| dir.display().to_string())?;
    let slice = match args.slice.resolve(&dump) {
        Ok(slice) => slice,
        Err(e) => {
            let s = &args.slice;
            let relative = s.last.is_some()
                || [&s.from, &s.to]
                    .into_iter()
                    .flatten()
                    .any(TimeSpec::needs_first_record);
            // Checked only on failure: for a raw dump the span is a whole walk.
            let timeless = dump.time_span().ok().is_some_and(|t| t.get().is_none());
            if relative && timeless {
                return Ok(None);
            }
            return Err(e.context(dir.display().to_string()));
        }
    };
    // Unix ns past i64 (the year 2262) bound nothing a dump holds.
    let ns = |v: Option<u64>| v.map(|v| i64::try_from(v).unwrap_or(i64::MAX));
    Ok(Some(slice.map_or((None, None), |s| {
        (ns(s.range.from_ns), ns(s.range.to_ns))
    })))
}

/// The dump directories of the targets: a dump is itself, a `cupmon run` output
/// gives every dump in it.
fn dumps_of(targets: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut dumps = Vec::new();
    for t in targets {
        if t.join(META_FILE).is_file() {
            dumps.push(t.clone());
            continue;
        }
        if !t.is_dir() {
            super::check_dump_dir(t)?;
        }
        let inside = super::dumps_in(t);
        if inside.is_empty() {
            return Err(BadInput(format!(
                "{}: neither a dump (no {META_FILE}) nor a `cupmon run` output directory (no \
                 subdirectory holds one)",
                t.display()
            ))
            .into());
        }
        dumps.extend(inside);
    }
    dumps.dedup();
    Ok(dumps)
}

/// OUT must not be a dump or inside one: nothing is written into a dump being read.
fn check_out(out: &Path, dumps: &[PathBuf]) -> Result<()> {
    let mut existing = std::path::absolute(out)?;
    while !existing.exists() {
        if !existing.pop() {
            break;
        }
    }
    let out_real = existing.canonicalize().unwrap_or(existing);
    for dump in dumps {
        let dump_real = dump.canonicalize().unwrap_or_else(|_| dump.clone());
        if out_real.starts_with(&dump_real) {
            return Err(BadInput(format!(
                "{}: inside the dump directory {} that this command reads; write the datasets \
                 elsewhere",
                out.display(),
                dump.display()
            ))
            .into());
        }
    }
    if out.join(META_FILE).exists() {
        return Err(BadInput(format!(
            "{}: is a dump directory; write the datasets elsewhere",
            out.display()
        ))
        .into());
    }
    Ok(())
}

fn export_error(e: ExportError) -> anyhow::Error {
    if e.is_bad_input() {
        BadInput(crate::exit::message(&anyhow::Error::from(e))).into()
    } else {
        e.into()
    }
}

fn this_host() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Rows, bytes and bytes per row of each dataset, then where it all went.
fn print_summary(out: &Path, exports: &[DumpExport]) {
    let mut lines = Vec::new();
    let mut files = 0;
    for spec in cupmon_parquet::DATASETS {
        let (mut rows, mut bytes) = (0u64, 0u64);
        for e in exports {
            for (name, t) in &e.datasets {
                if *name == spec.name {
                    rows += t.rows;
                    bytes += t.bytes;
                    files += t.files.len();
                }
            }
        }
        if rows > 0 {
            lines.push(format!(
                "  {:<8} {rows:>12} rows {:>12} bytes {:>7.2} B/row",
                spec.name,
                bytes,
                bytes as f64 / rows as f64
            ));
        }
    }
    let skipped: u64 = exports.iter().map(|e| e.chunks_already_exported).sum();
    let outside: u64 = exports.iter().map(|e| e.rows_outside_slice).sum();
    let lost: u64 = exports.iter().map(|e| e.chunks_retired_unread).sum();
    let mut out_lines = vec![format!(
        "exported {} dump{} into {} ({files} new files):",
        exports.len(),
        if exports.len() == 1 { "" } else { "s" },
        out.display()
    )];
    if lines.is_empty() {
        out_lines.push("  nothing new".to_owned());
    }
    out_lines.extend(lines);
    if skipped > 0 {
        out_lines.push(format!(
            "  {skipped} chunks were already exported (skipped)"
        ));
    }
    if lost > 0 {
        out_lines.push(format!(
            "  {lost} chunks were retired by the flight recorder (--keep/--keep-for) after the \
             last export and before this one: their rows are in no export; export more often"
        ));
    }
    let mut untimed: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for (dataset, n) in exports.iter().flat_map(|e| &e.untimed_gpu_ops) {
        *untimed.entry(dataset).or_insert(0) += n;
    }
    if !untimed.is_empty() {
        let total: u64 = untimed.values().sum();
        let each: Vec<String> = untimed.iter().map(|(d, n)| format!("{d} {n}")).collect();
        out_lines.push(format!(
            "  {total} GPU ops without a time ({}: CUPTI gave them start 0) were left out, as \
             traces leave them out",
            each.join(", ")
        ));
    }
    if outside > 0 {
        out_lines.push(format!(
            "  {outside} records started before --from and ran into the slice: outside \
             --from/--to by their start (left out)"
        ));
    }
    out_lines.push(format!(
        "query it: cupmon sql {0} --top-kernels, or duckdb -init {0}/cupmon.sql",
        out.display()
    ));
    for line in out_lines {
        super::say_written(out, &line);
    }
}
