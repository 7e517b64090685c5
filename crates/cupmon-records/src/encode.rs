//! The record encoder: typed records to CUPTI's byte layout for a given version. Used by
//! round-trip tests, benchmarks and the fake libcupti that tests the live monitor.
//! Padding, reserved fields and fields the target version lacks are written as zeros
//! (a field the target struct does not have is dropped).

use crate::kinds::Record;
use crate::{ActivityKind, Layout};

/// The output slice cannot hold the record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {kind:?} record needs {needed} bytes but only {available} are free in the buffer")]
pub struct BufferFull {
    pub kind: ActivityKind,
    pub needed: usize,
    pub available: usize,
}

/// Appends records to a growing buffer in one CUPTI version's layout.
///
/// ```
/// use cupmon_records::{ActivityKind, ExternalCorrelationRecord, Layout, Record, RecordIter, RecordWriter};
/// let mut w = RecordWriter::new(Layout::cupti_13_0());
/// w.push(&Record::ExternalCorrelation(ExternalCorrelationRecord {
///     kind: ActivityKind::EXTERNAL_CORRELATION, external_kind: 5, external_id: 1000,
///     correlation_id: 7 }));
/// let back: Vec<_> = RecordIter::new(w.as_bytes(), w.layout()).collect::<Result<_, _>>().unwrap();
/// assert_eq!(back.len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct RecordWriter {
    layout: Layout,
    buf: Vec<u8>,
}

impl RecordWriter {
    pub fn new(layout: Layout) -> Self {
        Self {
            layout,
            buf: Vec::new(),
        }
    }

    /// A writer whose buffer has room for `bytes` without reallocating.
    pub fn with_capacity(layout: Layout, bytes: usize) -> Self {
        Self {
            layout,
            buf: Vec::with_capacity(bytes),
        }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Append one record (8-byte aligned, as CUPTI packs them). Returns its offset.
    pub fn push(&mut self, record: &Record) -> usize {
        let offset = self.buf.len();
        let size = struct_size(record, self.layout);
        self.buf.resize(offset + size.next_multiple_of(8), 0);
        record.encode(
            &mut self.buf[offset..offset + size],
            self.layout.version().api(),
        );
        offset
    }

    /// Bytes written so far (what a completed CUPTI buffer's valid bytes would be).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Forget the records, keeping the allocation.
    pub fn clear(&mut self) {
        self.buf.clear();
    }
}

/// The struct size of `record` in `layout`. Every family is declared from API version
/// 18 on, the oldest a [`Layout`] can have, so there always is one (a test pins this).
fn struct_size(record: &Record, layout: Layout) -> usize {
    layout
        .struct_layout(record.kind())
        .or_else(|| record.spec().structs.first())
        .map_or(0, |s| s.size)
}

/// Size in bytes `record` takes in `layout` (including alignment padding).
pub fn encoded_size(record: &Record, layout: Layout) -> usize {
    struct_size(record, layout).next_multiple_of(8)
}

/// Encode `record` at the start of `out` (e.g. a buffer CUPTI would have handed out);
/// returns the bytes used. Fails, writing nothing, when `out` is too small.
pub fn encode_record(record: &Record, layout: Layout, out: &mut [u8]) -> Result<usize, BufferFull> {
    let size = struct_size(record, layout);
    let needed = size.next_multiple_of(8);
    let available = out.len();
    let Some(dst) = out.get_mut(..needed) else {
        return Err(BufferFull {
            kind: record.kind(),
            needed,
            available,
        });
    };
    dst.fill(0);
    record.encode(&mut dst[..size], layout.version().api());
    Ok(needed)
}
