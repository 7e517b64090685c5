//! Inputs that can be read only once (a pipe, a FIFO, /dev/stdin, a process
//! substitution) copied to a temporary file, for the merge, which reads its
//! CPU trace twice (pass 1 scans it, pass 2 copies the kept events' text).
//! Reopening a FIFO would wait for a writer that never comes; a pipe would
//! give the rest of the data, not the start.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::output::without_temp_path;
use crate::temp_files::{create_live_temp, LiveTemp};
use crate::OutputError;

/// Whether `path` can be read only once: it exists (links followed) and is
/// neither a regular file nor a directory.
pub fn needs_spool(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// A copy of a read-once input, removed when dropped (also on error paths)
/// and on interruption (it is registered with the live temporary files).
#[derive(Debug)]
pub struct Spooled {
    temp: tempfile::NamedTempFile,
    _live: LiveTemp,
}

impl Spooled {
    pub fn path(&self) -> &Path {
        self.temp.path()
    }
}

/// Copy `input` (bytes as they are: a gzip stays gzip) into a hidden
/// temporary file in `dir` whose name starts with `.{label}.`.
pub fn spool(input: &Path, dir: &Path, label: &str) -> Result<Spooled, OutputError> {
    let (mut temp, live) = create_live_temp(
        || {
            tempfile::Builder::new()
                .prefix(&format!(".{label}."))
                .suffix(".tmp")
                .tempfile_in(dir)
        },
        |t| t.path(),
    )
    .map_err(without_temp_path)
    .map_err(|err| OutputError {
        path: dir.to_path_buf(),
        what: "cannot create a temporary copy of a read-once input here",
        err,
    })?;
    let read_err = |err| OutputError {
        path: input.to_path_buf(),
        what: "cannot read",
        err,
    };
    let mut src = File::open(input).map_err(read_err)?;
    // io::copy cannot tell a read error from a write error: copy by hand.
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match io::Read::read(&mut src, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_err(e)),
        };
        io::Write::write_all(temp.as_file_mut(), &buf[..n]).map_err(|err| OutputError {
            path: temp.path().to_path_buf(),
            what: "cannot write the temporary copy of the input",
            err,
        })?;
    }
    Ok(Spooled { temp, _live: live })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_copied_once_and_the_copy_removed_on_drop() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("in.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            cupmon_test_skip::skipped!("mkfifo is not available");
            return;
        }
        assert!(needs_spool(&fifo));
        assert!(!needs_spool(dir.path()));
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, b"{\"traceEvents\":[]}"))
        };
        let copy = spool(&fifo, dir.path(), "out.json.cpu").expect("spool");
        writer.join().expect("join").expect("write");
        assert_eq!(
            std::fs::read(copy.path()).expect("read"),
            b"{\"traceEvents\":[]}"
        );
        let name = copy
            .path()
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with(".out.json.cpu.") && name.ends_with(".tmp"),
            "{name}"
        );
        let path = copy.path().to_path_buf();
        drop(copy);
        assert!(!path.exists());
    }
}
