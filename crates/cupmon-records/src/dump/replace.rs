//! Whole-file writes (the meta, a rewritten side file) go through a temporary file in
//! the same directory and a rename: a reader, or a process killed half-way, sees the
//! old file or the new one, never a mix or an empty one.

use std::fs;
use std::io;
use std::path::Path;

/// Write `bytes` to `path` by way of `path.tmp` and a rename over `path`.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path)
}
