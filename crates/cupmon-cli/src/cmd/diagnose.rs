//! `cupmon diagnose TARGET`: every rank's dump and hang records, read into the culprit
//! rank(s), what each rank is stuck in, where the collective sequences diverge, and
//! the evidence (`cupmon_hang::diagnose`); then the compute stragglers of the last
//! minutes of the dumps (the minutes before a hang: cupmon-straggler's analysis).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use cupmon_records::dump::META_FILE;
use cupmon_records::{Dump, TimeRange};
use cupmon_report::run_span;
use cupmon_straggler::{analyse, Analysis, Options, MINUTE_NS};

use super::report::order;
use crate::cli::DiagnoseArgs;
use crate::exit::BadInput;

/// How many minutes, ending with the last minute of the dumps, the stragglers are
/// compared over: the run's state before it hung or ended, read in a few seconds
/// even for a day-long dump (`cupmon stragglers` reads every minute).
pub const STRAGGLER_MINUTES: u64 = 5;

/// The dumps TARGET names: a dump directory, every dump of a run directory, or the
/// dump of a monitored pid.
pub fn target_dumps(target: &str) -> Result<Vec<PathBuf>> {
    let path = Path::new(target);
    if path.join(META_FILE).is_file() {
        return Ok(vec![path.to_owned()]);
    }
    if path.is_dir() {
        let dumps = super::dumps_in(path);
        if dumps.is_empty() {
            return Err(BadInput(format!(
                "{target}: neither a dump directory nor a `cupmon run` output directory \
                 (no {META_FILE} in it or in its subdirectories)"
            ))
            .into());
        }
        return Ok(dumps);
    }
    if target.parse::<u32>().is_ok() {
        let found = cupmon_control::find_processes(target).map_err(BadInput)?;
        return Ok(found.into_iter().map(|f| f.dump_dir).collect());
    }
    Err(BadInput(format!("{target}: no such directory, and not a pid")).into())
}

/// The stragglers of the last [`STRAGGLER_MINUTES`] of `dirs`. A problem here costs
/// the straggler part only (the hang diagnosis stands): it becomes a warning.
fn last_minutes_stragglers(dirs: &[PathBuf], warnings: &mut Vec<String>) -> Option<Analysis> {
    let mut dumps = Vec::with_capacity(dirs.len());
    for dir in dirs {
        match Dump::open(dir) {
            Ok(d) => dumps.push(d),
            Err(e) => warnings.push(format!(
                "{}: {e}: left out of the straggler comparison",
                dir.display()
            )),
        }
    }
    if dumps.len() < 2 {
        return None;
    }
    dumps.sort_by_key(order);
    let last_ns = match run_span(&dumps) {
        Ok(span) => span?.1,
        Err(e) => {
            warnings.push(format!("no straggler comparison: {e}"));
            return None;
        }
    };
    let first_minute = last_ns.saturating_sub((STRAGGLER_MINUTES - 1) * MINUTE_NS) / MINUTE_NS;
    let options = Options {
        range: TimeRange::new(Some(first_minute * MINUTE_NS), None),
        ..Options::default()
    };
    match analyse(&dumps, &options) {
        Ok(mut a) => {
            warnings.append(&mut a.warnings);
            Some(a)
        }
        Err(e) => {
            warnings.push(format!("no straggler comparison: {e}"));
            None
        }
    }
}

pub fn run(args: &DiagnoseArgs) -> Result<i32> {
    let dumps = target_dumps(&args.target)?;
    let diagnosis = cupmon_hang::diagnose::diagnose(&dumps).map_err(|e| BadInput(e.to_string()))?;
    let mut warnings = Vec::new();
    let stragglers = last_minutes_stragglers(&dumps, &mut warnings);
    for w in &warnings {
        eprintln!("cupmon: warning: {w}");
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        // The diagnosis' fields, and `stragglers`: the analysis of the last minutes
        // (`null` for fewer than two readable dumps).
        let mut output = serde_json::to_value(&diagnosis)?;
        output["stragglers"] = serde_json::to_value(&stragglers)?;
        serde_json::to_writer_pretty(&mut out, &output)?;
        writeln!(out)?;
    } else {
        cupmon_hang::diagnose::write_text(&mut out, &diagnosis)?;
        if let Some(a) = &stragglers {
            writeln!(
                out,
                "\nIn the last {STRAGGLER_MINUTES} minutes of the dumps (every minute: \
                 cupmon stragglers {}):",
                args.target
            )?;
            write!(out, "{a}")?;
        }
    }
    out.flush()?;
    Ok(0)
}
