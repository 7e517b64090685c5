//! The 32-byte header at the start of every compressed chunk (little-endian).

use super::error::{CompactError, Tag};

pub const COMPACT_MAGIC: [u8; 4] = *b"CMPZ";
pub const COMPACT_VERSION: u16 = 1;
pub const COMPACT_HEADER_LEN: usize = 32;

/// The longest section stream a buffer of `len` bytes may have: the columns transform
/// is used only when its stream is at most this long (records that share nothing plus
/// the kind column and table), which bounds what a decoder allocates.
pub fn max_section_len(len: u32) -> u64 {
    u64::from(len) + u64::from(len) / 8 + 8192
}

/// How the body holds the section stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// The body is the section stream itself (compression did not make it smaller).
    Stored = 0,
    /// The body is one zstd frame (with its content checksum) of the section stream.
    Zstd = 1,
}

/// What the section stream holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transform {
    /// The activity buffer's bytes unchanged (no record could be split off, or the
    /// columns came out longer than the buffer).
    Raw = 0,
    /// Kind table, kind column, per-kind columns, templates, verbatim tail.
    Columns = 1,
}

/// A compressed chunk's header: what a reader can learn without decompressing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactHeader {
    pub codec: Codec,
    pub transform: Transform,
    /// `cuptiGetVersion` of the layout the records were split with (0 for [`Transform::Raw`]).
    pub api_version: u32,
    /// Length of the activity buffer the chunk decompresses to.
    pub decompressed_len: u32,
    /// Records split into columns (0 for [`Transform::Raw`]).
    pub record_count: u32,
    /// Bytes after the last split record, kept verbatim (the whole buffer for raw).
    pub tail_len: u32,
    /// Length of the section stream (what the body decompresses to), at most
    /// [`max_section_len`] of the decompressed length.
    pub section_len: u32,
    /// Bytes following the header.
    pub body_len: u32,
}

impl CompactHeader {
    pub fn to_bytes(&self) -> [u8; COMPACT_HEADER_LEN] {
        let mut b = [0u8; COMPACT_HEADER_LEN];
        b[0..4].copy_from_slice(&COMPACT_MAGIC);
        b[4..6].copy_from_slice(&COMPACT_VERSION.to_le_bytes());
        b[6] = self.codec as u8;
        b[7] = self.transform as u8;
        let words = [
            self.api_version,
            self.decompressed_len,
            self.record_count,
            self.tail_len,
            self.section_len,
            self.body_len,
        ];
        for (i, w) in words.iter().enumerate() {
            b[8 + 4 * i..12 + 4 * i].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// The header at the start of `compressed`, checked on its own (magic, version,
    /// codec, transform, the body length against what follows, the lengths against each
    /// other); the kind table is checked when decoding.
    pub fn parse(compressed: &[u8]) -> Result<Self, CompactError> {
        let Some(b) = compressed.get(..COMPACT_HEADER_LEN) else {
            return Err(CompactError::TooShort {
                len: compressed.len(),
            });
        };
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let magic = [b[0], b[1], b[2], b[3]];
        if magic != COMPACT_MAGIC {
            return Err(CompactError::BadMagic { found: Tag(magic) });
        }
        let version = u16::from_le_bytes([b[4], b[5]]);
        if version != COMPACT_VERSION {
            return Err(CompactError::UnsupportedVersion { version });
        }
        let codec = match b[6] {
            0 => Codec::Stored,
            1 => Codec::Zstd,
            codec => return Err(CompactError::UnknownCodec { codec }),
        };
        let transform = match b[7] {
            0 => Transform::Raw,
            1 => Transform::Columns,
            transform => return Err(CompactError::UnknownTransform { transform }),
        };
        let h = Self {
            codec,
            transform,
            api_version: u32_at(8),
            decompressed_len: u32_at(12),
            record_count: u32_at(16),
            tail_len: u32_at(20),
            section_len: u32_at(24),
            body_len: u32_at(28),
        };
        let actual = (compressed.len() - COMPACT_HEADER_LEN) as u64;
        if u64::from(h.body_len) != actual {
            return Err(CompactError::BodyLength {
                expected: h.body_len.into(),
                actual,
            });
        }
        if u64::from(h.section_len) > max_section_len(h.decompressed_len) {
            return Err(CompactError::SectionsTooLong {
                section_len: h.section_len,
                decompressed_len: h.decompressed_len,
            });
        }
        if h.codec == Codec::Stored && h.body_len != h.section_len {
            return Err(CompactError::Lengths {
                what: "stored body and section lengths",
                expected: h.section_len.into(),
                actual: h.body_len.into(),
            });
        }
        if h.tail_len > h.decompressed_len {
            return Err(CompactError::Lengths {
                what: "tail and buffer lengths",
                expected: h.decompressed_len.into(),
                actual: h.tail_len.into(),
            });
        }
        if h.transform == Transform::Raw {
            // The raw section stream is the buffer: no records, all tail.
            let checks = [
                ("raw transform's record count", 0, h.record_count),
                (
                    "raw transform's tail length",
                    h.decompressed_len,
                    h.tail_len,
                ),
                (
                    "raw transform's section length",
                    h.decompressed_len,
                    h.section_len,
                ),
            ];
            for (what, expected, actual) in checks {
                if expected != actual {
                    return Err(CompactError::Lengths {
                        what,
                        expected: expected.into(),
                        actual: actual.into(),
                    });
                }
            }
        }
        Ok(h)
    }
}
