//! A dump directory given on the command line, checked before it is read, so
//! that the common mistakes get a message that says what to pass instead.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cupmon_records::dump::META_FILE;

use crate::exit::BadInput;

/// How many dump directories of a run directory the message lists.
const LISTED: usize = 8;

/// `dir` must be a dump: a directory holding `cupti_monitor_meta.bin`. A
/// `cupmon run -o DIR` output (dumps in `DIR/<pid>-<start>`, `DIR/rank<R>-<pid>-<start>`)
/// is named as such, with its dumps.
pub fn check_dump_dir(dir: &Path) -> Result<()> {
    let bad = |why: String| Err(BadInput(format!("{}: {why}", dir.display())).into());
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return bad("no such dump directory".to_owned())
        }
        Err(e) => return bad(format!("cannot read: {e}")),
        Ok(m) if !m.is_dir() => {
            return bad(format!(
                "not a directory; a dump is a directory holding {META_FILE}"
            ))
        }
        Ok(_) => {}
    }
    if dir.join(META_FILE).exists() {
        return Ok(());
    }
    let dumps = dumps_in(dir);
    let Some(first) = dumps.first() else {
        return bad(format!(
            "not a dump directory: there is no {META_FILE} in it"
        ));
    };
    let mut names: Vec<String> = dumps
        .iter()
        .take(LISTED)
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    if dumps.len() > LISTED {
        names.push(format!("and {} more", dumps.len() - LISTED));
    }
    bad(format!(
        "a `cupmon run` output directory, not a dump; it holds the dump {} {}: pass one, \
         e.g. {}",
        if dumps.len() == 1 {
            "directory"
        } else {
            "directories"
        },
        names.join(", "),
        first.display()
    ))
}

/// Subdirectories of `dir` that hold a meta file, in name order.
pub fn dumps_in(dir: &Path) -> Vec<PathBuf> {
    let mut dumps: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(META_FILE).is_file())
        .collect();
    dumps.sort();
    dumps
}
