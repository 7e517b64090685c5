//! Chunk numbers that stay put while the flight recorder retires segments.
//!
//! `walk_records` numbers a dump's buffers from 0 at its first *live* segment, so
//! once the oldest segments are retired the same buffer gets a smaller number. The
//! export state records chunk numbers between runs, so it needs numbers that count
//! the retired buffers too: the number of the first live buffer is the sum of the
//! chunk counts that `segments/index.jsonl` gives every segment before the first
//! live one (each was closed, with its count, before it was retired).

use std::collections::BTreeMap;

use cupmon_records::dump::{parse_index_line, IndexLine, SEGMENTS_DIR, SEGMENT_INDEX_FILE};
use cupmon_records::Dump;

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
    // By the rule every dump file is read by; one refused (Dump::open warned about it)
    // counts no segment.
    let text = match cupmon_files::read_capped(&path, cupmon_records::dump::SEGMENT_INDEX_CAP) {
        Ok(text) => text,
        Err(cupmon_files::FileError::Io { source, .. }) => {
            return Err(ExportError::io(&path, "cannot read", source))
        }
        Err(_) => Vec::new(),
    };
    let mut chunks = BTreeMap::new();
    // A line that does not parse (the last one, cut by a kill) names no count: the
    // segments it would have counted are `uncounted`. Dump::open warns about it.
    // A line that fails its checksum counts nothing either, as readers skip it.
    for line in text.split(|&b| b == b'\n') {
        let line = String::from_utf8_lossy(line);
        if let Ok(IndexLine::Closed(s)) = parse_index_line(line.trim_end_matches('\r')) {
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
