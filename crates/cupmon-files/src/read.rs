//! Opening and reading a file by the crate's rule (see the crate docs).

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{FileError, FileKind};

/// Open `path` for reading by the rule: not through a final symbolic link, without
/// waiting on a FIFO, and only if it is a regular file. Returns the file and its size.
/// For files streamed in pieces (segments); whole small files use [`read_capped`].
pub fn open_regular(path: &Path) -> Result<(File, u64), FileError> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) => return Err(refused_open(path, e)),
    };
    let meta = file.metadata().map_err(|e| FileError::io(path, e))?;
    if let Some(kind) = FileKind::of(meta.file_type()) {
        return Err(FileError::NotRegular {
            path: path.to_path_buf(),
            kind,
        });
    }
    // O_NONBLOCK stays set: on a regular file it changes nothing (clearing it would
    // take an fcntl call, which std does not offer without unsafe code).
    Ok((file, meta.len()))
}

/// [`open_regular`], with `None` for a file that is not there.
pub fn open_regular_if_present(path: &Path) -> Result<Option<(File, u64)>, FileError> {
    match open_regular(path) {
        Err(e) if e.is_not_found() => Ok(None),
        other => other.map(Some),
    }
}

/// The whole of the file at `path`, by the rule, if it holds at most `cap` bytes: the
/// most such a file can legitimately hold, which the caller knows.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    let (file, len) = open_regular(path)?;
    let too_large = |size| FileError::TooLarge {
        path: path.to_path_buf(),
        size,
        cap,
    };
    if len > cap {
        return Err(too_large(len));
    }
    // The file may grow while it is read (a live dump): read one byte past the cap
    // to tell a file that reached it from one that went over.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_capped`], with `None` for a file that is not there.
pub fn read_capped_if_present(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, FileError> {
    match read_capped(path, cap) {
        Err(e) if e.is_not_found() => Ok(None),
        other => other.map(Some),
    }
}

/// The error for an `open` that failed: with `O_NOFOLLOW` a final symbolic link fails
/// with `ELOOP`, and a socket fails with `ENXIO`; say what the path is then.
fn refused_open(path: &Path, e: io::Error) -> FileError {
    let code = e.raw_os_error();
    if code == Some(libc::ELOOP) || code == Some(libc::ENXIO) {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if let Some(kind) = FileKind::of(meta.file_type()) {
                let kind = match kind {
                    FileKind::Symlink { .. } => FileKind::Symlink {
                        target: std::fs::read_link(path).ok(),
                    },
                    other => other,
                };
                return FileError::NotRegular {
                    path: path.to_path_buf(),
                    kind,
                };
            }
        }
    }
    FileError::io(path, e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    fn mkfifo(path: &Path) {
        let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
        assert!(status.success());
    }

    #[test]
    fn a_regular_file_is_read_whole_up_to_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.tsv");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_capped(&path, 5).unwrap(), b"12345");
        assert_eq!(read_capped(&path, 1 << 20).unwrap(), b"12345");
        let (_, len) = open_regular(&path).unwrap();
        assert_eq!(len, 5);
        std::fs::write(&path, b"").unwrap();
        assert_eq!(read_capped(&path, 0).unwrap(), b"");
    }

    #[test]
    fn a_file_over_its_cap_is_refused_with_its_size_and_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("meta.bin");
        std::fs::write(&path, vec![b'x'; 4097]).unwrap();
        let err = read_capped(&path, 4096).unwrap_err();
        assert!(matches!(
            err,
            FileError::TooLarge {
                size: 4097,
                cap: 4096,
                ..
            }
        ));
        assert_eq!(
            err.to_string(),
            format!(
                "{}: 4097 bytes, more than the 4096 bytes such a file can hold",
                path.display()
            )
        );
        // A sparse file of 1 TiB is refused without reading it.
        let big = dir.path().join("sparse");
        File::create(&big).unwrap().set_len(1 << 40).unwrap();
        let t = Instant::now();
        assert!(matches!(
            read_capped(&big, 1 << 20),
            Err(FileError::TooLarge { size, .. }) if size == 1 << 40
        ));
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_fifo_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernel_names.tsv");
        mkfifo(&path);
        let t = Instant::now();
        let err = read_capped(&path, 1 << 20).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(
                &err,
                FileError::NotRegular {
                    kind: FileKind::Fifo,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(err.problem(), "a FIFO (named pipe), not a regular file");
        assert!(open_regular(&path).is_err());
    }

    #[test]
    fn a_planted_link_is_not_followed_and_names_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cupmon_control.json");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let err = read_capped(&path, 1 << 20).unwrap_err();
        assert_eq!(
            err.problem(),
            "a symbolic link (to /dev/zero), not a regular file"
        );
        // Even a link to a good regular file: the file is not where it should be.
        let real = dir.path().join("real");
        std::fs::write(&real, b"{}").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(
            read_capped(&link, 10),
            Err(FileError::NotRegular {
                kind: FileKind::Symlink { .. },
                ..
            })
        ));
    }

    #[test]
    fn a_device_a_directory_and_a_socket_are_refused() {
        let err = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(err.problem(), "a character device, not a regular file");
        let dir = tempfile::tempdir().unwrap();
        let err = read_capped(dir.path(), 1 << 20).unwrap_err();
        assert_eq!(err.problem(), "a directory, not a regular file");
        let sock = dir.path().join("control.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let err = read_capped(&sock, 1 << 20).unwrap_err();
        assert_eq!(err.problem(), "a socket, not a regular file");
    }

    #[test]
    fn a_missing_file_is_none_where_it_may_be_missing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent");
        assert!(read_capped_if_present(&path, 10).unwrap().is_none());
        assert!(open_regular_if_present(&path).unwrap().is_none());
        let err = read_capped(&path, 10).unwrap_err();
        assert!(err.is_not_found());
        assert!(err.to_string().starts_with(&path.display().to_string()));
    }
}
