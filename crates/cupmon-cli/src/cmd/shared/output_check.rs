//! The output path, checked before any work starts: writing it must not
//! destroy an input. Files are compared by device and inode after following
//! links, so a symlink or a hard link to an input is caught too.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::Result;
use cupmon_files::{resolve_links, writes_in_place};
use cupmon_trace::OutputName;

use crate::exit::BadInput;

/// What a command reads.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A file (CPU trace, window).
    File(&'a Path),
    /// A dump directory: nothing may be written into it while it is read.
    Dump(&'a Path),
}

type FileId = (u64, u64);

fn id_of(path: &Path) -> Option<FileId> {
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Refuse an output that is a directory, lies in a directory that does not
/// exist, is one of the inputs, or is inside a dump the command reads.
/// Outputs written in place (`-`, a device, a FIFO, /dev/stdout) replace nothing.
pub fn check_output(output: &Path, inputs: &[Input<'_>]) -> Result<()> {
    let bad = |why: String| Err(BadInput(format!("{}: {why}", output.display())).into());
    if writes_in_place(output) {
        return Ok(());
    }
    let target = match resolve_links(output) {
        Ok(t) => t,
        Err(e) => return bad(format!("cannot follow the link: {e}")),
    };
    if target.is_dir() {
        return bad("is a directory; give a file name".to_owned());
    }
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Some(parent_id) = id_of(&parent).filter(|_| parent.is_dir()) else {
        return bad(format!("the directory {} does not exist", parent.display()));
    };
    let output_id = id_of(&target);
    for input in inputs {
        match *input {
            Input::File(path) => {
                if output_id.is_some() && id_of(path) == output_id {
                    return bad(format!(
                        "the output would replace an input ({}); choose another name",
                        path.display()
                    ));
                }
            }
            Input::Dump(dir) => {
                // A hard link elsewhere to one of the dump's files counts too.
                let holds_output = || {
                    fs::read_dir(dir)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .any(|e| id_of(&e.path()) == output_id)
                };
                if id_of(dir) == Some(parent_id) || (output_id.is_some() && holds_output()) {
                    return bad(format!(
                        "inside the dump directory {} that this command reads; \
                         write the output elsewhere",
                        dir.display()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// What a command writes, checked against what its output's name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// A trace (Chrome JSON or Perfetto's protobuf, by the name or --format).
    Trace,
    /// `cupmon report`'s HTML page.
    Html,
}

/// Refuse an output whose name says it holds something else than the command
/// writes: a trace named as a trace window (`*window*.json`), which a later
/// `cupmon merge --window` cannot read, or a report page named as a trace.
pub fn check_output_name(output: &Path, writes: Writes) -> Result<()> {
    let named = OutputName::of(output);
    let fix = match (writes, named) {
        (Writes::Trace, OutputName::Window) => {
            "this command writes a trace, not a trace window: name it *.trace.json.gz \
             (or *.pftrace)"
        }
        (Writes::Html, OutputName::Other) => return Ok(()),
        (Writes::Html, _) => "cupmon report writes an HTML page: name it *.html",
        (Writes::Trace, _) => return Ok(()),
    };
    let says = named.says().unwrap_or("something else");
    Err(BadInput(format!("{}: the name says {says}; {fix}", output.display())).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_named_as_a_window_and_a_page_named_as_a_trace_are_refused() {
        let check = |p: &str, w| check_output_name(Path::new(p), w).map_err(|e| e.to_string());
        assert!(check("t.trace.json.gz", Writes::Trace).is_ok());
        assert!(check("t.json", Writes::Trace).is_ok());
        assert!(check("-", Writes::Trace).is_ok());
        let err = check("slow.window.json", Writes::Trace).unwrap_err();
        assert!(err.contains("name it *.trace.json.gz"), "{err}");
        assert!(check("report.html", Writes::Html).is_ok());
        let err = check("report.trace.json.gz", Writes::Html).unwrap_err();
        assert!(err.contains("writes an HTML page"), "{err}");
    }
}
