//! `cupmon report TARGET -o report.html`: one HTML page of what the GPUs did, for a
//! dump or every process of a `cupmon run` output directory (cupmon-report builds it).
//! The dumps are read at once, one per core; the page is written whole or not at all.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use cupmon_files::writes_in_place;
use cupmon_records::dump::META_FILE;
use cupmon_records::Dump;
use cupmon_report::{build_report, run_span, Options, ReportError};
use cupmon_trace::{AtomicOutput, TraceError};

use super::{check_output, say_written, Input};
use crate::cli::ReportArgs;
use crate::exit::BadInput;
use crate::progress::Progress;

pub fn run(args: &ReportArgs) -> Result<i32> {
    let dirs = dump_dirs(&args.target)?;
    let inputs: Vec<Input> = dirs.iter().map(|d| Input::Dump(d)).collect();
    check_output(&args.output, &inputs)?;
    super::check_output_name(&args.output, super::Writes::Html)?;
    let mut dumps = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        dumps.push(Dump::open(dir).with_context(|| dir.display().to_string())?);
    }
    dumps.sort_by_key(order);
    let slice = args
        .slice
        .resolve_in(|| run_span(&dumps).map_err(report_error))?;
    // The span again only when resolving did not need it (cheap with a time index).
    let span = match slice.and_then(|s| s.span) {
        Some(span) => Some(span),
        None => run_span(&dumps).map_err(report_error)?,
    };
    let options = Options {
        range: slice.map(|s| s.range).unwrap_or_default(),
        bin: args.bin,
        top: args.top,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let total: u64 = dumps.iter().map(Dump::buffer_file_bytes).sum();
    let progress = Mutex::new((Progress::bytes("reading", total), vec![0u64; dumps.len()]));
    let target = args.target.display().to_string();
    let report = build_report(&target, &dumps, span, &options, &|i, p| {
        let mut guard = progress.lock().unwrap_or_else(|e| e.into_inner());
        let (bar, done) = &mut *guard;
        done[i] = p.bytes_read;
        let sum = done.iter().sum();
        bar.update(sum);
    })
    .map_err(report_error)?;
    progress
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .0
        .finish();
    for p in &report.processes {
        for warning in &p.stats.report.warnings {
            eprintln!("cupmon: warning: {}: {warning}", p.label);
        }
        // Said in the page too; a window file not read is damage the user must see.
        for e in &p.window_errors {
            eprintln!("cupmon: warning: {e}: its window is not marked");
        }
    }
    if let Some(s) = &slice {
        if report.processes.iter().all(|p| p.stats.report.records == 0) {
            let msg = s.empty_message(&dumps[0]);
            return Err(BadInput(format!("{target}: {msg}")).into());
        }
    }
    let page_dir = page_dir(&args.output)?;
    write_page(&report, &page_dir, &args.output)?;
    let size = std::fs::metadata(&args.output).map_or(0, |m| m.len());
    say_written(
        &args.output,
        &format!(
            "wrote {} ({} processes, {} bins, {:.1} kB); open it in a browser",
            args.output.display(),
            report.processes.len(),
            report.grid.bins(),
            size as f64 / 1e3
        ),
    );
    Ok(0)
}

/// The dumps of `target`: itself, or the dump directories in it (a `cupmon run`
/// output directory).
fn dump_dirs(target: &Path) -> Result<Vec<PathBuf>> {
    let bad =
        |why: String| -> anyhow::Error { BadInput(format!("{}: {why}", target.display())).into() };
    match std::fs::metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad("no such directory".to_owned()))
        }
        Err(e) => return Err(bad(format!("cannot read: {e}"))),
        Ok(m) if !m.is_dir() => {
            return Err(bad(format!(
                "not a directory; give a dump directory (holding {META_FILE}) or a `cupmon run` \
                 output directory"
            )))
        }
        Ok(_) => {}
    }
    if target.join(META_FILE).exists() {
        return Ok(vec![target.to_path_buf()]);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(target)
        .map_err(|e| bad(format!("cannot read: {e}")))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(META_FILE).is_file())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(bad(format!(
            "neither a dump directory nor a `cupmon run` output directory: no {META_FILE} in it \
             or in its subdirectories"
        )));
    }
    Ok(dirs)
}

/// Ranks in numeric order, then processes without a rank by directory.
fn order(dump: &Dump) -> (u8, i64, String, PathBuf) {
    let info = cupmon_report::info::ProcessInfo::from_meta(dump.meta());
    let dir = dump.dir().to_path_buf();
    match info.rank {
        Some(r) => match r.parse::<i64>() {
            Ok(n) => (0, n, String::new(), dir),
            Err(_) => (1, 0, r, dir),
        },
        None => (2, 0, String::new(), dir),
    }
}

fn report_error(e: ReportError) -> anyhow::Error {
    match e {
        ReportError::Dump { .. } => anyhow::Error::from(e),
        other => BadInput(other.to_string()).into(),
    }
}

/// The absolute directory the page lands in (links to trace files start there).
fn page_dir(output: &Path) -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("the current directory")?;
    if writes_in_place(output) {
        return Ok(cwd);
    }
    let target = cupmon_files::resolve_links(output).unwrap_or_else(|_| output.to_path_buf());
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok(std::fs::canonicalize(&parent).unwrap_or_else(|_| cwd.join(parent)))
}

fn write_page(report: &cupmon_report::Report, page_dir: &Path, output: &Path) -> Result<()> {
    let out = AtomicOutput::create(output)?;
    let mut writer = out.writer()?;
    cupmon_report::write_html(report, page_dir, &mut writer)
        .and_then(|()| writer.flush())
        .map_err(|err| TraceError::Io {
            path: output.to_path_buf(),
            what: "cannot write",
            err,
        })?;
    out.commit(writer)?;
    Ok(())
}
