//! A frame: the data of a version-3 chunk in a segment file. A 40-byte time index
//! (little-endian `<IIQQQQ>`: records, kernels, first and last time of the records on
//! the Unix clock, first and last raw time of the records on another client's clock;
//! an empty range is `u64::MAX, 0`) and then the buffer's compact encoding
//! (`compact/`). A reader decides from the index alone whether a time slice needs the
//! buffer, and decompresses only those it needs.

use crate::Record;

pub const FRAME_INDEX_LEN: usize = 40;

/// The time index of one frame: what a slice needs to know to skip it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameIndex {
    pub records: u32,
    pub kernels: u32,
    /// First start and last end of the records on the Unix clock (ns).
    pub native: TimeSpan,
    /// The same for records on another clock, in that clock's raw units: a reader
    /// converts them with the dump's clock samples.
    pub foreign: TimeSpan,
}

/// `[first, last]` in ns; empty when `first > last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeSpan {
    pub first: u64,
    pub last: u64,
}

impl TimeSpan {
    pub const EMPTY: Self = Self {
        first: u64::MAX,
        last: 0,
    };

    pub fn is_empty(&self) -> bool {
        self.first > self.last
    }

    /// Widen to cover `[start, end]`.
    pub fn add(&mut self, start: u64, end: u64) {
        self.first = self.first.min(start);
        self.last = self.last.max(end.max(start));
    }

    /// Widen to cover `other`.
    pub fn join(&mut self, other: TimeSpan) {
        if !other.is_empty() {
            self.add(other.first, other.last);
        }
    }

    /// The span, `None` when empty.
    pub fn get(&self) -> Option<(u64, u64)> {
        (!self.is_empty()).then_some((self.first, self.last))
    }
}

impl Default for TimeSpan {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Default for FrameIndex {
    fn default() -> Self {
        Self {
            records: 0,
            kernels: 0,
            native: TimeSpan::EMPTY,
            foreign: TimeSpan::EMPTY,
        }
    }
}

impl FrameIndex {
    /// Count `record` and widen the span of its clock by its interval. Timestamps of
    /// 0 (unknown) do not count.
    pub fn add(&mut self, record: &Record) {
        self.records += 1;
        if matches!(record, Record::Kernel(_)) {
            self.kernels += 1;
        }
        let Some((start, end)) = record.interval() else {
            return;
        };
        if start == 0 {
            return;
        }
        let end = if end == 0 { start } else { end };
        if record.has_foreign_timestamp() {
            self.foreign.add(start, end);
        } else {
            self.native.add(start, end);
        }
    }

    pub fn to_bytes(&self) -> [u8; FRAME_INDEX_LEN] {
        let mut b = [0u8; FRAME_INDEX_LEN];
        b[0..4].copy_from_slice(&self.records.to_le_bytes());
        b[4..8].copy_from_slice(&self.kernels.to_le_bytes());
        for (i, v) in [
            self.native.first,
            self.native.last,
            self.foreign.first,
            self.foreign.last,
        ]
        .into_iter()
        .enumerate()
        {
            b[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// The index at the start of `frame`; `None` when the frame is shorter than one.
    pub fn parse(frame: &[u8]) -> Option<Self> {
        let b = frame.get(..FRAME_INDEX_LEN)?;
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or_default());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        Some(Self {
            records: u32_at(0),
            kernels: u32_at(4),
            native: TimeSpan {
                first: u64_at(8),
                last: u64_at(16),
            },
            foreign: TimeSpan {
                first: u64_at(24),
                last: u64_at(32),
            },
        })
    }
}
