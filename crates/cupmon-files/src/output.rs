//! Output files that appear whole or not at all: written to a temporary file
//! beside the target, then renamed over it. (What goes into the file, gzip
//! included, is the writer's business: `cupmon-trace` wraps this for `.gz`.)
//!
//! Outputs that are not regular files (`-` for standard output, a character
//! device such as /dev/null, a FIFO, a socket) are written in place as the
//! data comes: a rename would replace the device node or the FIFO with a
//! regular file. A symlink is followed: the file it points to is replaced
//! (atomically, beside that file) and the link stays a link.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::temp_files::{create_live_temp, LiveTemp};
use crate::OutputError;

/// The output name that means standard output.
pub const STDOUT_NAME: &str = "-";

/// Whether an output at `path` is written in place, as a stream: `-`, or an
/// existing file (links followed) that is neither a regular file nor a
/// directory.
pub fn writes_in_place(path: &Path) -> bool {
    path.as_os_str() == STDOUT_NAME || fs::metadata(path).is_ok_and(|m| is_stream(&m))
}

fn is_stream(meta: &fs::Metadata) -> bool {
    !meta.is_file() && !meta.is_dir()
}

/// The path a write to `path` lands on: symlinks followed one by one, also a
/// dangling one (the write creates its target). Links in the directories
/// above do not matter to a rename, so only the last component is followed.
pub fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    // Linux's own limit (MAXSYMLINKS).
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                // An absolute target replaces the whole path in `join`.
                current = match current.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Where a temporary file that belongs with the output at `path` goes: beside
/// the file the output replaces (same file system, so the rename works and
/// there is room), or the system's temporary directory for an in-place output.
pub fn temp_dir_for(path: &Path) -> PathBuf {
    if writes_in_place(path) {
        return std::env::temp_dir();
    }
    let target = resolve_links(path).unwrap_or_else(|_| path.to_path_buf());
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// tempfile's errors end in `at path "/dir/.name.XXXXXX.tmp"`: the message
/// names the output already, and the hidden name means nothing to the user.
pub fn without_temp_path(err: io::Error) -> io::Error {
    // The OS error inside is not reachable (its wrapper has no source): cut the text.
    let text = err.to_string();
    match text.rfind(" at path \"") {
        Some(i) => io::Error::new(err.kind(), &text[..i]),
        None => err,
    }
}

/// A file being written; dropped without [`AtomicOutput::commit`], a regular
/// output vanishes (an in-place one keeps what was written).
#[derive(Debug)]
pub struct AtomicOutput {
    path: PathBuf,
    sink: Sink,
}

#[derive(Debug)]
enum Sink {
    /// A temporary file beside `target`, renamed onto it at the end.
    Replace {
        target: PathBuf,
        temp: tempfile::NamedTempFile,
        _live: LiveTemp,
    },
    /// Standard output, a device, a FIFO: written as it comes.
    InPlace(File),
}

impl AtomicOutput {
    pub fn create(path: &Path) -> Result<Self, OutputError> {
        let io_err = |what: &'static str| {
            let path = path.to_path_buf();
            move |err: io::Error| OutputError { path, what, err }
        };
        if path.as_os_str() == STDOUT_NAME {
            let fd = io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .map_err(io_err("cannot write to standard output"))?;
            return Ok(Self {
                path: path.to_path_buf(),
                sink: Sink::InPlace(File::from(fd)),
            });
        }
        // The kernel's view first: /dev/stdout leads to a magic link
        // (/proc/self/fd/1 -> "pipe:[...]") that only the kernel can follow.
        if fs::metadata(path).is_ok_and(|m| is_stream(&m)) {
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io_err("cannot open the output"))?;
            return Ok(Self {
                path: path.to_path_buf(),
                sink: Sink::InPlace(file),
            });
        }
        let target = resolve_links(path).map_err(io_err("cannot follow the link"))?;
        let existing = fs::metadata(&target).ok();
        let dir = temp_dir_for(&target);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A replaced file keeps its mode; a new one is an ordinary 0644 file
        // (a temporary file would be 0600).
        let mode = existing.map_or(0o644, |m| m.permissions().mode() & 0o7777);
        let (temp, live) = create_live_temp(
            || {
                tempfile::Builder::new()
                    .prefix(&format!(".{name}."))
                    .suffix(".tmp")
                    .permissions(fs::Permissions::from_mode(mode))
                    .tempfile_in(&dir)
            },
            |t| t.path(),
        )
        .map_err(without_temp_path)
        .map_err(io_err("cannot create the output file"))?;
        Ok(Self {
            path: path.to_path_buf(),
            sink: Sink::Replace {
                target,
                temp,
                _live: live,
            },
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the output is written in place (see [`writes_in_place`]).
    pub fn in_place(&self) -> bool {
        matches!(self.sink, Sink::InPlace(_))
    }

    /// A buffered writer into the output (1 MiB: the outputs are large and
    /// written in small pieces); [`AtomicOutput::commit`] finishes it.
    pub fn writer(&self) -> Result<BufWriter<File>, OutputError> {
        Ok(BufWriter::with_capacity(1 << 20, self.file()?))
    }

    /// The output file itself, for a writer that buffers on its own (the
    /// Parquet writer); [`AtomicOutput::commit_file`] finishes it.
    pub fn file(&self) -> Result<File, OutputError> {
        let file = match &self.sink {
            Sink::Replace { temp, .. } => temp.as_file(),
            Sink::InPlace(file) => file,
        };
        file.try_clone().map_err(|err| OutputError {
            path: self.path.clone(),
            what: "cannot open the output file",
            err,
        })
    }

    /// Flush `writer` and move the file into place.
    pub fn commit(self, writer: BufWriter<File>) -> Result<(), OutputError> {
        let file = writer.into_inner().map_err(|e| OutputError {
            path: self.path.clone(),
            what: "cannot write the output file",
            err: e.into_error(),
        })?;
        self.commit_file(file)
    }

    /// Move the file into place (`file`: what [`AtomicOutput::file`] gave,
    /// all written).
    pub fn commit_file(self, file: File) -> Result<(), OutputError> {
        let io_err = |what: &'static str| {
            let path = self.path.clone();
            move |err: io::Error| OutputError { path, what, err }
        };
        let Sink::Replace {
            target,
            temp,
            _live,
        } = self.sink
        else {
            return Ok(());
        };
        file.sync_all().ok();
        drop(file);
        temp.persist(&target)
            .map_err(|e| e.error)
            .map_err(io_err("cannot move the finished output into place"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn write(path: &Path, text: &str) -> Result<bool, OutputError> {
        let out = AtomicOutput::create(path)?;
        let in_place = out.in_place();
        let mut w = out.writer()?;
        w.write_all(text.as_bytes()).expect("write");
        out.commit(w)?;
        Ok(in_place)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_symlink_is_written_through_and_stays_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real");
        fs::create_dir(&real).expect("mkdir");
        let target = real.join("t.json");
        fs::write(&target, "old").expect("write");
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).expect("chmod");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("real/t.json", &link).expect("symlink");
        assert!(!write(&link, "new").expect("write"));
        assert!(fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).expect("read"), "new");
        let mode = fs::metadata(&target).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the replaced file keeps its mode");
        assert_eq!(names(&real), ["t.json"]);
        assert_eq!(names(dir.path()), ["link.json", "real"]);
    }

    #[test]
    fn a_dangling_symlink_creates_its_target() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("made.json", &link).expect("symlink");
        write(&link, "x").expect("write");
        assert_eq!(
            fs::read_to_string(dir.path().join("made.json")).expect("read"),
            "x"
        );
        assert!(fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_fifo_is_written_in_place_and_stays_a_fifo() {
        // A FIFO, not /dev/null: as root a regression would replace the
        // system's /dev/null (the CLI tests cover devices safely).
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("out.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            cupmon_test_skip::skipped!("mkfifo is not available");
            return;
        }
        assert!(writes_in_place(&fifo));
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo))
        };
        assert!(write(&fifo, "streamed").expect("write"));
        assert_eq!(reader.join().expect("join").expect("read"), b"streamed");
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::symlink_metadata(&fifo)
            .expect("meta")
            .file_type()
            .is_fifo());
        assert_eq!(names(dir.path()), ["out.fifo"]);
    }

    #[test]
    fn an_output_in_a_missing_directory_names_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("missing/out.json");
        let err = write(&out, "x").expect_err("no directory").to_string();
        assert!(
            err.ends_with("No such file or directory (os error 2)"),
            "{err}"
        );
        assert!(!err.contains("at path"), "{err}");
    }

    #[test]
    fn a_link_loop_is_an_error_naming_the_output() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).expect("symlink");
        std::os::unix::fs::symlink("a", dir.path().join("b")).expect("symlink");
        let err = write(&a, "x").expect_err("loop").to_string();
        assert!(
            err.contains("symbolic links") && err.contains("/a"),
            "{err}"
        );
    }
}
