//! Why a compressed chunk cannot be decoded: every message names the part of the
//! encoding (header, kind table, a column) and the value that is wrong.

use std::fmt;

/// Four bytes shown as a Rust byte string (`b"CMPZ"`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Tag(pub [u8; 4]);

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("b\"")?;
        for &b in &self.0 {
            write!(f, "{}", std::ascii::escape_default(b))?;
        }
        f.write_str("\"")
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A compressed chunk that cannot be decompressed, or a buffer that cannot be compressed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactError {
    #[error("activity buffer of {len} bytes is too long for a chunk (at most 4294967295 bytes)")]
    BufferTooLong { len: usize },
    #[error("compressed chunk of {len} bytes is shorter than its 32-byte header")]
    TooShort { len: usize },
    #[error("compressed chunk: bad magic {found}, expected b\"CMPZ\"")]
    BadMagic { found: Tag },
    #[error("compressed chunk: unsupported format version {version}, expected 1")]
    UnsupportedVersion { version: u16 },
    #[error("compressed chunk: unknown codec {codec} (0 = stored, 1 = zstd)")]
    UnknownCodec { codec: u8 },
    #[error("compressed chunk: unknown transform {transform} (0 = raw, 1 = record columns)")]
    UnknownTransform { transform: u8 },
    #[error("compressed chunk decompresses to {len} bytes, more than the {max_len} bytes allowed")]
    TooLarge { len: u64, max_len: usize },
    #[error("compressed chunk: header says {expected} body bytes follow the header, {actual} do")]
    BodyLength { expected: u64, actual: u64 },
    #[error(
        "compressed chunk: {section_len}-byte section stream is too long for the \
         {decompressed_len}-byte buffer it encodes (at most 1/8 longer, plus 8192 bytes)"
    )]
    SectionsTooLong {
        section_len: u32,
        decompressed_len: u32,
    },
    #[error(
        "compressed chunk: {what} are inconsistent: the header says {expected}, \
         the encoding gives {actual}"
    )]
    Lengths {
        what: &'static str,
        expected: u64,
        actual: u64,
    },
    #[error(
        "compressed chunk was split with the records of CUPTI API version {stored}, \
         the dump's layout is API version {layout}"
    )]
    LayoutMismatch { stored: u32, layout: u32 },
    #[error("compressed chunk body: zstd: {message}")]
    Zstd { message: String },
    #[error(
        "compressed chunk: section stream ends inside {section} at byte {offset}: \
         {needed} bytes needed, {available} left"
    )]
    Truncated {
        section: &'static str,
        offset: usize,
        needed: u64,
        available: usize,
    },
    #[error("compressed chunk: kind table entry {entry}: {problem}")]
    KindTable { entry: usize, problem: String },
    #[error("compressed chunk: kind {kind}, delta field {field}: {problem}")]
    DeltaField {
        kind: u8,
        field: usize,
        problem: String,
    },
    #[error("compressed chunk: record {record}: kind {kind} {problem}")]
    KindColumn {
        record: usize,
        kind: u8,
        problem: &'static str,
    },
    #[error(
        "compressed chunk: kind {kind}, record {record} of that kind: template id {id} \
         but only {templates} templates"
    )]
    TemplateId {
        kind: u8,
        record: usize,
        id: u32,
        templates: u32,
    },
    #[error(
        "compressed chunk: kind {kind}, template {template} starts with kind {found}, \
         not its own"
    )]
    TemplateKind { kind: u8, template: u32, found: u32 },
}
