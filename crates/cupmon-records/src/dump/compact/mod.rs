//! Compact chunks: a lossless, record-aware compression of one activity buffer (one
//! CUPMRBUF chunk's payload). On a synthetic training job's CUPTI 13.0 kernels it takes
//! 5.3 bytes per 216-byte kernel record (zstd -1 of the raw bytes: 22), on the real
//! fixtures 4.2-6.7 bytes per record (zstd -1: 9.3-9.8), for less CPU than zstd -1 of
//! the raw bytes on full buffers (`bench/compact/RESULTS.md`).
//!
//! [`compress_chunk`] / [`decompress_chunk`] (or the reusable [`ChunkCompressor`] /
//! [`ChunkDecompressor`], which keep their zstd contexts and scratch buffers) give back
//! the buffer byte for byte: records, the padding inside them, and any bytes the layout
//! cannot decode (kept verbatim as the tail).
//!
//! # Encoding (format version 1, all integers little-endian)
//!
//! A 32-byte header ([`CompactHeader`]), then `body_len` bytes of body:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..4 | magic `b"CMPZ"` |
//! | 4..6 | format version, 1 |
//! | 6 | codec: 0 = stored (the body is the section stream), 1 = one zstd frame of it, with zstd's content checksum |
//! | 7 | transform: 0 = raw (the section stream is the buffer), 1 = record columns |
//! | 8..12 | `cuptiGetVersion` of the layout the records were split with (0 for raw) |
//! | 12..16 | decompressed length: the activity buffer's bytes |
//! | 16..20 | record count (0 for raw) |
//! | 20..24 | tail length: bytes after the last record, kept verbatim |
//! | 24..28 | section stream length (at most the decompressed length + 1/8 + 8192) |
//! | 28..32 | body length |
//!
//! The columns transform cuts the buffer into records with the layout (a record of kind
//! `k` takes `record_size(k)` rounded up to 8 bytes; the walk stops at an unknown kind or
//! a record running past the end, and the rest is the tail), then writes the section
//! stream:
//!
//! 1. Kind table: `u8` kind count, then per kind present, in ascending kind order: `u8`
//!    kind, `u16` record bytes, `u32` records, `u32` templates, `u8` template id width
//!    (0-4), `u8` delta field count, and per delta field `u16` offset, `u8` size (4 or
//!    8), `u8` stored width (0-8), `u8` predictor (0 = previous record's field `i`,
//!    1 = this record's field `i`, 2 = this record's field `i` plus the last difference
//!    seen with the same template), `u8` `i`, `u64` seed (where predictor 0 starts).
//! 2. Kind column: one byte per record, its kind (left out when one kind is present).
//! 3. Per kind: the template id of each record, then each delta field's stored values,
//!    as byte-stream split columns (all low bytes, then all second bytes, ...).
//! 4. Per kind: the templates, column-major (byte `o` of every template, for each offset
//!    `o` not in a delta field). A template is a record with its delta fields zeroed:
//!    name pointer, launch configuration, stream, device... (one per distinct value).
//! 5. The tail.
//!
//! Delta fields are the spec's timestamps and the counters (`correlation_id`, `grid_id`,
//! `external_id`, ...). A stored value is 0 for a field that is 0, else
//! `zigzag(value - prediction) + 1` (wrapping; a bijection, see `delta.rs`). The encoder
//! picks each field's predictor per chunk and kind (64 records or more; fewer use the
//! first timestamp for the others and the previous value for the rest): the candidate
//! whose stored values have the lowest byte-column entropy on a sample spread over the
//! chunk (kernels: `start` vs the previous record's `end` or `start`, `end` vs `start`
//! plus the last duration of the same template, `completed` vs `end`, ...).
//!
//! The decoder checks every count, length, id and offset before using it: any input
//! gives a buffer or an error naming what is wrong, never a panic, and allocates only
//! after the header's decompressed length passed the caller's `max_len`: the section
//! stream (at most 1/8 + 8 KiB more than that), the templates and the output (each at
//! most that).

mod columns;
pub(crate) mod delta;
mod error;
mod header;
mod join;
mod split;
mod table;
#[cfg(test)]
mod tests;
mod typed;

pub use error::{CompactError, Tag};
pub use header::{
    max_section_len, Codec, CompactHeader, Transform, COMPACT_HEADER_LEN, COMPACT_MAGIC,
    COMPACT_VERSION,
};

pub use split::CompactOptions;
pub use typed::FrameRecords;

use split::Splitter;

use crate::Layout;

/// zstd's level 1: the dump writer's default (higher levels cost more CPU for a few %).
pub const DEFAULT_LEVEL: i32 = 1;

/// Compresses activity buffers of one layout, reusing its zstd context and scratch.
pub struct ChunkCompressor {
    layout: Layout,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    splitter: Splitter,
    sections: Vec<u8>,
    body: Vec<u8>,
}

impl std::fmt::Debug for ChunkCompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkCompressor")
            .field("layout", &self.layout.version())
            .finish_non_exhaustive()
    }
}

impl ChunkCompressor {
    /// A compressor at zstd `level` (clamped by zstd to its range; 0 = zstd's default).
    /// If zstd cannot set up a context (out of memory), chunks are stored uncompressed.
    pub fn new(layout: Layout, level: i32) -> Self {
        Self::with_options(layout, level, CompactOptions::default())
    }

    /// [`ChunkCompressor::new`] using only the parts of the transform `options` names.
    pub fn with_options(layout: Layout, level: i32, options: CompactOptions) -> Self {
        let zstd = zstd::bulk::Compressor::new(level)
            .and_then(|mut c| c.include_checksum(true).map(|()| c))
            .ok();
        Self {
            layout,
            zstd,
            splitter: Splitter::new(options),
            sections: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Compress `data` (one activity buffer) into `out` (cleared first).
    pub fn compress_into(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), CompactError> {
        let decompressed_len = u32::try_from(data.len())
            .map_err(|_| CompactError::BufferTooLong { len: data.len() })?;
        let mut header = CompactHeader {
            codec: Codec::Stored,
            transform: Transform::Raw,
            api_version: 0,
            decompressed_len,
            record_count: 0,
            tail_len: decompressed_len,
            section_len: decompressed_len,
            body_len: 0,
        };
        let split = self.splitter.split(data, &self.layout, &mut self.sections);
        let sections: &[u8] = match split {
            Some(counts) if self.sections.len() as u64 <= max_section_len(decompressed_len) => {
                header.transform = Transform::Columns;
                header.api_version = self.layout.version().api();
                header.record_count = counts.records;
                header.tail_len = counts.tail;
                header.section_len = self.sections.len() as u32;
                &self.sections
            }
            _ => data,
        };
        let compressed = match &mut self.zstd {
            Some(z) if !sections.is_empty() => {
                self.body.clear();
                self.body
                    .reserve(zstd::zstd_safe::compress_bound(sections.len()));
                z.compress_to_buffer(sections, &mut self.body).is_ok()
                    && self.body.len() < sections.len()
            }
            _ => false,
        };
        out.clear();
        out.extend_from_slice(&[0u8; COMPACT_HEADER_LEN]);
        if compressed {
            header.codec = Codec::Zstd;
            out.extend_from_slice(&self.body);
        } else {
            out.extend_from_slice(sections);
        }
        header.body_len = (out.len() - COMPACT_HEADER_LEN) as u32;
        out[..COMPACT_HEADER_LEN].copy_from_slice(&header.to_bytes());
        Ok(())
    }

    /// Encode `data` stored (no transform, no compression) into `out`: what the dump
    /// writer does when it falls behind CUPTI, at the cost of a copy.
    pub fn store_into(data: &[u8], out: &mut Vec<u8>) -> Result<(), CompactError> {
        let len = u32::try_from(data.len())
            .map_err(|_| CompactError::BufferTooLong { len: data.len() })?;
        let header = CompactHeader {
            codec: Codec::Stored,
            transform: Transform::Raw,
            api_version: 0,
            decompressed_len: len,
            record_count: 0,
            tail_len: len,
            section_len: len,
            body_len: len,
        };
        out.clear();
        out.extend_from_slice(&header.to_bytes());
        out.extend_from_slice(data);
        Ok(())
    }

    /// [`ChunkCompressor::compress_into`] a new vector.
    pub fn compress(&mut self, data: &[u8]) -> Result<Vec<u8>, CompactError> {
        let mut out = Vec::new();
        self.compress_into(data, &mut out)?;
        Ok(out)
    }
}

/// Decompresses compact chunks of one layout, reusing its zstd context and scratch.
pub struct ChunkDecompressor {
    layout: Layout,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    sections: Vec<u8>,
    join: join::JoinScratch,
}

impl std::fmt::Debug for ChunkDecompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkDecompressor")
            .field("layout", &self.layout.version())
            .finish_non_exhaustive()
    }
}

impl ChunkDecompressor {
    pub fn new(layout: Layout) -> Self {
        Self {
            layout,
            zstd: None,
            sections: Vec::new(),
            join: join::JoinScratch::default(),
        }
    }

    /// Decompress `compressed` into `out` (cleared first); a header declaring more than
    /// `max_len` bytes is refused before anything is allocated.
    pub fn decompress_into(
        &mut self,
        compressed: &[u8],
        max_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), CompactError> {
        let header = self.header(compressed, max_len)?;
        let sections = section_stream(&mut self.zstd, &mut self.sections, &header, compressed)?;
        match header.transform {
            Transform::Raw => {
                out.clear();
                out.extend_from_slice(sections);
                Ok(())
            }
            Transform::Columns => join::join(sections, &header, &self.layout, &mut self.join, out),
        }
    }

    /// The records `compressed` holds, for a walk: straight from its columns where
    /// they can be ([`FrameRecords`]), else its activity buffer's bytes (rebuilt into
    /// `out`, or lent from the body of a stored chunk) to decode with
    /// [`crate::RecordIter`]. Errors as [`ChunkDecompressor::decompress_into`].
    pub fn frame<'a>(
        &'a mut self,
        compressed: &'a [u8],
        max_len: usize,
        out: &'a mut Vec<u8>,
    ) -> Result<Frame<'a>, CompactError> {
        let header = self.header(compressed, max_len)?;
        let sections = section_stream(&mut self.zstd, &mut self.sections, &header, compressed)?;
        if header.transform == Transform::Raw {
            return Ok(Frame::Bytes(sections));
        }
        if let Some(records) = typed::prepare(sections, &header, &self.layout)? {
            return Ok(Frame::Records(records));
        }
        join::join(sections, &header, &self.layout, &mut self.join, out)?;
        Ok(Frame::Bytes(out))
    }

    /// The header of `compressed`, checked against `max_len` and the layout.
    fn header(&self, compressed: &[u8], max_len: usize) -> Result<CompactHeader, CompactError> {
        let header = CompactHeader::parse(compressed)?;
        if header.decompressed_len as usize > max_len {
            return Err(CompactError::TooLarge {
                len: header.decompressed_len.into(),
                max_len,
            });
        }
        if header.transform == Transform::Columns {
            let layout = self.layout.version().api();
            if header.api_version != layout {
                return Err(CompactError::LayoutMismatch {
                    stored: header.api_version,
                    layout,
                });
            }
        }
        Ok(header)
    }

    /// [`ChunkDecompressor::decompress_into`] a new vector.
    pub fn decompress(
        &mut self,
        compressed: &[u8],
        max_len: usize,
    ) -> Result<Vec<u8>, CompactError> {
        let mut out = Vec::new();
        self.decompress_into(compressed, max_len, &mut out)?;
        Ok(out)
    }
}

/// The section stream of `compressed` (its `header` checked): the body of a stored
/// chunk, or its zstd frame decompressed into `buf`, which must come out exactly
/// `header.section_len` bytes.
fn section_stream<'a>(
    zstd: &mut Option<zstd::bulk::Decompressor<'static>>,
    buf: &'a mut Vec<u8>,
    header: &CompactHeader,
    compressed: &'a [u8],
) -> Result<&'a [u8], CompactError> {
    let body = &compressed[COMPACT_HEADER_LEN..];
    if header.codec == Codec::Stored {
        return Ok(body);
    }
    let len = header.section_len as usize;
    let zstd_error = |e: std::io::Error| CompactError::Zstd {
        message: e.to_string(),
    };
    if zstd.is_none() {
        *zstd = Some(zstd::bulk::Decompressor::new().map_err(zstd_error)?);
    }
    let Some(z) = zstd.as_mut() else {
        let message = "no decompression context".to_owned();
        return Err(CompactError::Zstd { message });
    };
    buf.clear();
    buf.reserve_exact(len);
    // The bulk API decodes into the buffer it is given and fails rather than grow it.
    let written = z.decompress_to_buffer(body, buf).map_err(zstd_error)?;
    if written != len {
        return Err(CompactError::Lengths {
            what: "section stream lengths (zstd frame)",
            expected: len as u64,
            actual: written as u64,
        });
    }
    Ok(buf)
}

/// What [`ChunkDecompressor::frame`] gives.
#[derive(Debug)]
pub enum Frame<'a> {
    /// The activity buffer's bytes.
    Bytes(&'a [u8]),
    /// Its records, from the columns.
    Records(FrameRecords<'a>),
}

/// Compress one activity buffer written by `layout`'s CUPTI at zstd `level`
/// ([`DEFAULT_LEVEL`] for the dump writer). Errors only for a buffer longer than a
/// chunk can be (4 GiB).
pub fn compress_chunk(data: &[u8], layout: Layout, level: i32) -> Result<Vec<u8>, CompactError> {
    ChunkCompressor::new(layout, level).compress(data)
}

/// The activity buffer `compressed` holds, if it is at most `max_len` bytes.
pub fn decompress_chunk(
    compressed: &[u8],
    layout: Layout,
    max_len: usize,
) -> Result<Vec<u8>, CompactError> {
    ChunkDecompressor::new(layout).decompress(compressed, max_len)
}
