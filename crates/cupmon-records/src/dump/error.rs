//! Errors of the dump reader (its warnings are in `warning.rs`): every message names the
//! file and, for the raw-buffer file, the chunk and the byte where the problem starts.

use std::fmt;
use std::io;

use crate::{DecodeError, UnsupportedVersion};

/// Eight bytes shown as a Rust byte string (`b"CUPMRBUF"`, `b"\x00\xff..."`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Magic(pub [u8; 8]);

impl fmt::Display for Magic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("b\"")?;
        for &b in &self.0 {
            write!(f, "{}", std::ascii::escape_default(b))?;
        }
        f.write_str("\"")
    }
}

impl fmt::Debug for Magic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A dump that cannot be read. Damage the reader can step over (a cut or zero-filled
/// tail, a bad chunk header after which it finds a good one, a cut last line of a side
/// file) is a [`super::DumpWarning`] instead; these are what it cannot step over.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: io::Error,
    },
    /// Not a regular file (a FIFO, a device, a link planted in its place), or larger
    /// than such a file can be: not read.
    #[error("{file}: {problem}")]
    Refused { file: String, problem: String },
    #[error("{file}: empty file (0 bytes)")]
    EmptyFile { file: String },
    /// Every byte of the raw-buffer file is zero: what a power loss leaves of a file whose
    /// size reached the disk but whose data did not.
    #[error("{file}: all {bytes} bytes are zero, as a power loss leaves: no chunk survived")]
    AllZero { file: String, bytes: u64 },
    #[error("{file}: chunk {chunk} at byte {byte}: bad magic {found}, expected b\"CUPMRBUF\"")]
    BadChunkMagic {
        file: String,
        chunk: u64,
        byte: u64,
        found: Magic,
    },
    #[error(
        "{file}: chunk {chunk} at byte {byte}: unsupported chunk version {version}, expected {expected}"
    )]
    BadChunkVersion {
        file: String,
        chunk: u64,
        byte: u64,
        expected: u32,
        version: u32,
    },
    #[error(
        "{file}: chunk {chunk} at byte {byte}: valid size {size} exceeds the activity buffer \
         size {max} that the meta declares (corrupt chunk header)"
    )]
    ChunkTooLarge {
        file: String,
        chunk: u64,
        byte: u64,
        size: u64,
        max: u64,
    },
    #[error("{file}: {problem}")]
    BadMeta { file: String, problem: String },
    #[error("{file}: {source}")]
    UnsupportedVersion {
        file: String,
        #[source]
        source: UnsupportedVersion,
    },
    #[error("{file}: line {line}: {problem}")]
    BadSideFile {
        file: String,
        line: usize,
        problem: String,
    },
    #[error("{file}: chunk {chunk} at byte {byte}: {source}")]
    BadRecords {
        file: String,
        chunk: u64,
        byte: u64,
        #[source]
        source: DecodeError,
    },
}

impl DumpError {
    pub(crate) fn io(file: &str, source: io::Error) -> Self {
        Self::Io {
            file: file.to_owned(),
            source,
        }
    }

    pub(crate) fn meta(file: &str, problem: impl Into<String>) -> Self {
        Self::BadMeta {
            file: file.to_owned(),
            problem: problem.into(),
        }
    }
}
