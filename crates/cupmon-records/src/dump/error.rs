//! Errors and warnings of the dump reader: every message names the file and, for the
//! raw-buffer file, the chunk and the byte where the problem starts.

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

/// A dump that cannot be read (past the point named in the message).
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: io::Error,
    },
    #[error("{file}: empty file (0 bytes)")]
    EmptyFile { file: String },
    #[error("{file}: chunk {chunk} at byte {byte}: bad magic {found}, expected b\"CUPMRBUF\"")]
    BadChunkMagic {
        file: String,
        chunk: u64,
        byte: u64,
        found: Magic,
    },
    #[error(
        "{file}: chunk {chunk} at byte {byte}: unsupported chunk version {version}, expected 2"
    )]
    BadChunkVersion {
        file: String,
        chunk: u64,
        byte: u64,
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

/// The raw-buffer file ends inside a chunk (a crash or a copy cut it short). Every
/// complete chunk before it was read; this is a warning, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    pub file: String,
    /// Number (position in the file, from 0) of the cut chunk.
    pub chunk: u64,
    /// File offset where the cut chunk's header starts.
    pub byte: u64,
    /// Bytes the chunk needs (header, plus its valid size when the header is complete).
    pub needed: u64,
    /// Bytes the file still has from `byte` on.
    pub available: u64,
}

impl fmt::Display for Truncation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.chunk == 1 { "" } else { "s" };
        write!(
            f,
            "{}: truncated: chunk {} at byte {} needs {} bytes but only {} remain; \
             kept the {} complete chunk{plural} before it",
            self.file, self.chunk, self.byte, self.needed, self.available, self.chunk
        )
    }
}

/// A problem that did not stop the decode but leaves it incomplete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpWarning {
    /// The raw-buffer file ends inside a chunk.
    Truncated(Truncation),
    /// A chunk's records stop making sense at some offset; the rest of that chunk was
    /// skipped (its earlier records were kept) and decoding went on with the next chunk.
    BadRecords {
        file: String,
        chunk: u64,
        /// File offset of the bad record.
        byte: u64,
        error: DecodeError,
        /// Bytes of the chunk left undecoded.
        skipped_bytes: u64,
    },
    /// Records stamped by another clock (a client's timestamp callback) that could not
    /// be converted to Unix ns: left out of the output.
    OffClock { records: u64 },
}

impl fmt::Display for DumpWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated(t) => t.fmt(f),
            Self::BadRecords {
                file,
                chunk,
                byte,
                error,
                skipped_bytes,
            } => write!(
                f,
                "{file}: chunk {chunk} at byte {byte}: {error}; skipped the last \
                 {skipped_bytes} bytes of this chunk"
            ),
            Self::OffClock { records } => write!(
                f,
                "{records} records carry timestamps of another clock (a CUPTI client such as \
                 torch.profiler registered its own) and the dump holds too few samples of that \
                 clock to convert them; they were left out"
            ),
        }
    }
}
