//! The output path, checked before any work starts: writing it must not
//! destroy an input. Files are compared by device and inode after following
//! links, so a symlink or a hard link to an input is caught too.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::Result;
use cupmon_trace::{resolve_links, writes_in_place};

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
