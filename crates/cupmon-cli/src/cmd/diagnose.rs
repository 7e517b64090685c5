//! `cupmon diagnose TARGET`: every rank's dump and hang records, read into the culprit
//! rank(s), what each rank is stuck in, where the collective sequences diverge, and
//! the evidence (`cupmon_hang::diagnose`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use cupmon_records::dump::META_FILE;

use crate::cli::DiagnoseArgs;
use crate::exit::BadInput;

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

pub fn run(args: &DiagnoseArgs) -> Result<i32> {
    let dumps = target_dumps(&args.target)?;
    let diagnosis = cupmon_hang::diagnose::diagnose(&dumps).map_err(|e| BadInput(e.to_string()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &diagnosis)?;
        writeln!(out)?;
    } else {
        cupmon_hang::diagnose::write_text(&mut out, &diagnosis)?;
    }
    Ok(0)
}
