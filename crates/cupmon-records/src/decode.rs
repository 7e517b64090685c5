//! The record decoder: walks an activity buffer (records packed back to back, 8-byte
//! aligned, each starting with its `u32` kind) and yields typed records by value, with
//! no allocation. Any input is safe: an unknown kind or a record running past the end
//! is an error naming the offset, after which the iterator ends.

use crate::kinds::{self, Record};
use crate::{ActivityKind, CuptiVersion, Layout};

/// Why a buffer could not be decoded past `offset`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("record at offset {offset}: unknown activity kind {kind} for CUPTI {version}")]
    UnknownKind {
        offset: usize,
        kind: u32,
        version: CuptiVersion,
    },
    #[error(
        "record at offset {offset}: {kind:?} record of {size} bytes runs past the buffer end \
         ({available} bytes left)"
    )]
    Truncated {
        offset: usize,
        kind: ActivityKind,
        size: usize,
        available: usize,
    },
    #[error(
        "record at offset {offset}: {available} trailing bytes, too few to hold a record kind"
    )]
    TrailingBytes { offset: usize, available: usize },
}

impl DecodeError {
    /// Offset within the buffer of the record that failed.
    pub fn offset(&self) -> usize {
        match *self {
            Self::UnknownKind { offset, .. }
            | Self::Truncated { offset, .. }
            | Self::TrailingBytes { offset, .. } => offset,
        }
    }
}

/// Iterator over the records of one activity buffer. Ends after the first error.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    buf: &'a [u8],
    pos: usize,
    layout: Layout,
}

impl<'a> RecordIter<'a> {
    /// Decode `buf` (the valid bytes of one completed buffer) as written by `layout`'s CUPTI.
    pub fn new(buf: &'a [u8], layout: Layout) -> Self {
        Self {
            buf,
            pos: 0,
            layout,
        }
    }

    /// Offset of the next record to be decoded.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Like `next`, also giving the record's offset within the buffer.
    #[inline]
    pub fn next_with_offset(&mut self) -> Option<Result<(usize, Record), DecodeError>> {
        let offset = self.pos;
        self.next().map(|r| r.map(|rec| (offset, rec)))
    }

    /// Yields `(offset, record)` pairs.
    pub fn with_offsets(self) -> WithOffsets<'a> {
        WithOffsets(self)
    }

    #[inline]
    fn fail(&mut self, error: DecodeError) -> Option<Result<Record, DecodeError>> {
        self.pos = self.buf.len();
        Some(Err(error))
    }
}

impl Iterator for RecordIter<'_> {
    type Item = Result<Record, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.buf.get(self.pos..)?;
        let offset = self.pos;
        let Some(&[a, b, c, d]) = rest.get(..4) else {
            if rest.is_empty() {
                return None;
            }
            let available = rest.len();
            return self.fail(DecodeError::TrailingBytes { offset, available });
        };
        let kind = u32::from_le_bytes([a, b, c, d]);
        let api = self.layout.version().api();
        let decoded = self.layout.record_size(kind).map(|size| {
            let record = rest
                .get(..size)
                .and_then(|rec| kinds::decode(ActivityKind(kind), rec, api).flatten());
            (size, record)
        });
        match decoded {
            Some((size, Some(record))) => {
                self.pos += (size + 7) & !7;
                Some(Ok(record))
            }
            Some((size, None)) => {
                let available = rest.len();
                self.fail(DecodeError::Truncated {
                    offset,
                    kind: ActivityKind(kind),
                    size,
                    available,
                })
            }
            None => {
                let version = self.layout.version();
                self.fail(DecodeError::UnknownKind {
                    offset,
                    kind,
                    version,
                })
            }
        }
    }
}

/// [`RecordIter`] yielding `(offset, record)`.
#[derive(Debug, Clone)]
pub struct WithOffsets<'a>(RecordIter<'a>);

impl Iterator for WithOffsets<'_> {
    type Item = Result<(usize, Record), DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_with_offset()
    }
}

/// Decode the one record at the start of `bytes`; returns it and the offset of the next.
pub fn decode_record(bytes: &[u8], layout: Layout) -> Result<(Record, usize), DecodeError> {
    let mut it = RecordIter::new(bytes, layout);
    match it.next() {
        Some(Ok(record)) => Ok((record, it.offset())),
        Some(Err(e)) => Err(e),
        None => Err(DecodeError::TrailingBytes {
            offset: 0,
            available: 0,
        }),
    }
}
