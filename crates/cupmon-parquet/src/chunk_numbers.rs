//! Chunk numbers that stay put while the flight recorder retires segments.
//!
//! `walk_records` numbers a dump's buffers from 0 at its first *live* segment, so
//! once the oldest segments are retired the same buffer gets a smaller number. The
//! export state records chunk numbers between runs, so it needs numbers that count
//! the retired buffers too: the number of the first live buffer is the sum of the
//! chunk counts that `segments/index.jsonl` gives every segment before the first
//! live one (each was closed, with its count, before it was retired).

use std::collections::BTreeMap;

use cupmon_records::dump::{IndexLine, SEGMENTS_DIR, SEGMENT_INDEX_FILE};
use cupmon_records::{Dump, TimeRange};

use crate::error::ExportError;

/// Where the walk's buffer numbers start in the dump's whole history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChunkBase {
    /// The number of the first buffer the walk reads.
    pub first_live: u64,
    /// Segments before the first live one whose chunk count the index does not give
    /// (removed without a `closed` line): `first_live` is then too small.
    pub uncounted_segments: u64,
}

/// The [`ChunkBase`] of `dump` (0 for PyTorch's single raw file, which never loses
/// its head).
pub fn chunk_base(dump: &Dump) -> Result<ChunkBase, ExportError> {
    let Some(list) = dump.segments() else {
        return Ok(ChunkBase::default());
    };
    let Some(first_live) = list.live.first().map(|f| f.segment) else {
        // Nothing live: no buffer to number.
        return Ok(ChunkBase::default());
    };
    if first_live <= 1 {
        return Ok(ChunkBase::default());
    }
    let path = dump.dir().join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE);
    let text = std::fs::read(&path).map_err(|e| ExportError::io(&path, "cannot read", e))?;
    let mut chunks = BTreeMap::new();
    // A line that does not parse (the last one, cut by a kill) names no count: the
    // segments it would have counted are `uncounted`. Dump::open warns about it.
    for line in text.split(|&b| b == b'\n') {
        if let Ok(IndexLine::Closed(s)) = serde_json::from_slice::<IndexLine>(line) {
            chunks.insert(s.segment, s.chunks);
        }
    }
    let mut base = ChunkBase::default();
    for segment in 1..first_live {
        match chunks.get(&segment) {
            Some(&n) => base.first_live += n,
            None => base.uncounted_segments += 1,
        }
    }
    Ok(base)
}

/// Walk buffer numbers -> numbers over the live segments, for a slice's walk.
///
/// A slice's walk leaves closed segments that the time index shows outside the slice
/// unopened, and numbers the buffers it reads consecutively, as if the skipped
/// segments were not there. The export state needs every buffer's place in the
/// dump, so the chunks of each skipped segment (its summary's count) are added back
/// to the numbers after it. Which segments the walk skips follows its rule (a
/// segment is read unless its summary's spans, the foreign one on the dump's
/// clock, all miss the range); the caller checks the count against the walk's
/// `segments_skipped`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SliceNumbers {
    /// `(first walk number, chunks to add from it on)`, by walk number.
    steps: Vec<(u64, u64)>,
    /// Segments the walk is expected to skip.
    pub skipped: u64,
}

impl SliceNumbers {
    /// The numbers of a walk of `dump` over `range` (none to add for the whole dump).
    pub fn new(dump: &Dump, range: &TimeRange) -> Self {
        let mut numbers = Self::default();
        let Some(list) = dump.segments() else {
            return numbers;
        };
        if range.is_all() {
            return numbers;
        }
        // The clock is fitted from every chunk header: only when a span needs it.
        let foreign = list.live.iter().any(|f| {
            f.summary
                .as_ref()
                .is_some_and(|s| s.foreign_first.is_some())
        });
        let clock = foreign.then(|| dump.clock_samples().fit()).flatten();
        let (mut walk, mut add, mut pending, mut placed) = (0u64, 0u64, false, true);
        for file in &list.live {
            let Some(s) = &file.summary else {
                // Read (no index says otherwise), with a count nobody knows: the
                // numbers after it stay as the walk gives them. Only the active
                // segment, the last one, normally lacks its summary.
                placed = false;
                continue;
            };
            let native = s.first_ns.zip(s.last_ns);
            let foreign = s.foreign_first.zip(s.foreign_last);
            let overlaps = native.is_some_and(|(a, b)| range.overlaps(a, b))
                || foreign
                    .zip(clock)
                    .is_some_and(|((a, b), c)| range.overlaps(c.to_unix(a), c.to_unix(b)));
            if overlaps {
                if pending && placed {
                    numbers.steps.push((walk, add));
                    pending = false;
                }
                walk += s.chunks;
            } else {
                numbers.skipped += 1;
                add += s.chunks;
                pending = true;
            }
        }
        numbers
    }

    /// The live-segment number of the buffer the walk numbered `n`.
    pub fn live(&self, n: u64) -> u64 {
        let i = self.steps.partition_point(|&(from, _)| from <= n);
        n + i.checked_sub(1).map_or(0, |i| self.steps[i].1)
    }
}
