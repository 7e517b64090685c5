//! Why a file was not read: each message names the file and says what it is.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What a path turned out to be, where cupmon expected a regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    Fifo,
    CharDevice,
    BlockDevice,
    Socket,
    Directory,
    /// A symbolic link (never followed), with where it points when that is readable.
    Symlink {
        target: Option<PathBuf>,
    },
    /// Anything else that is not a regular file.
    Other,
}

impl FileKind {
    pub(crate) fn of(file_type: std::fs::FileType) -> Option<Self> {
        use std::os::unix::fs::FileTypeExt;
        Some(if file_type.is_file() {
            return None;
        } else if file_type.is_fifo() {
            Self::Fifo
        } else if file_type.is_char_device() {
            Self::CharDevice
        } else if file_type.is_block_device() {
            Self::BlockDevice
        } else if file_type.is_socket() {
            Self::Socket
        } else if file_type.is_dir() {
            Self::Directory
        } else if file_type.is_symlink() {
            Self::Symlink { target: None }
        } else {
            Self::Other
        })
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fifo => f.write_str("a FIFO (named pipe)"),
            Self::CharDevice => f.write_str("a character device"),
            Self::BlockDevice => f.write_str("a block device"),
            Self::Socket => f.write_str("a socket"),
            Self::Directory => f.write_str("a directory"),
            Self::Symlink { target: Some(t) } => {
                write!(f, "a symbolic link (to {})", t.display())
            }
            Self::Symlink { target: None } => f.write_str("a symbolic link"),
            Self::Other => f.write_str("not a regular file"),
        }
    }
}

/// A file cupmon would not read, or could not.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Not a regular file: a FIFO would hang the reader, a device or a link to one
    /// (`/dev/zero`) would never end, a link may lead anywhere.
    #[error("{}: {kind}, not a regular file", path.display())]
    NotRegular { path: PathBuf, kind: FileKind },
    /// Larger than such a file can legitimately be.
    #[error(
        "{}: {size} bytes, more than the {cap} bytes such a file can hold",
        path.display()
    )]
    TooLarge { path: PathBuf, size: u64, cap: u64 },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl FileError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            Self::NotRegular { path, .. } | Self::TooLarge { path, .. } | Self::Io { path, .. } => {
                path
            }
        }
    }

    /// What is wrong, without the path: for messages that name the file their own way
    /// (a dump's files by their name in the dump).
    pub fn problem(&self) -> String {
        match self {
            Self::NotRegular { kind, .. } => format!("{kind}, not a regular file"),
            Self::TooLarge { size, cap, .. } => {
                format!("{size} bytes, more than the {cap} bytes such a file can hold")
            }
            Self::Io { source, .. } => source.to_string(),
        }
    }

    /// The file is not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// Into an `io::Error` (for callers whose errors are I/O errors), keeping the message.
    pub fn into_io(self) -> io::Error {
        match self {
            Self::Io { source, .. } => source,
            other => io::Error::new(io::ErrorKind::InvalidData, other.problem()),
        }
    }
}

/// Writing an output failed: the output (as the user named it), what was being
/// done and the system's error.
#[derive(Debug, thiserror::Error)]
#[error("{}: {what}: {err}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    pub what: &'static str,
    // Shown in the message, so not also a `source` (that would print it twice).
    pub err: io::Error,
}
