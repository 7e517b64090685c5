//! Small whole-file writes (a dump's meta and side files, the control file, a
//! window's JSON: one writer each, under a name its readers know) go through a
//! temporary file in the same directory and a rename: a reader, or a process
//! killed half-way, sees the old file or the new one, never a mix or an empty
//! one. The temporary name is fixed (`NAME.tmp`, no random part: the meta's
//! readers look for it), so these are not registered as live temporary files.

use std::fs;
use std::io;
use std::path::Path;

/// Write `bytes` to `path` by way of `path.tmp` and a rename over `path`.
pub fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path)
}
