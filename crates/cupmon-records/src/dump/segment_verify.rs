//! Every frame of a closed segment checked against its seal, without decompressing:
//! what lets a stored digest stand for a segment whose size, first and last frames are
//! sound (`segment_audit.rs`) but whose bytes between them may have changed. A byte
//! flipped there fails its frame's checksum (XXH3-64 over the compressed bytes, the
//! same check every reader of records makes); the digest then cannot stand for the
//! segment, whose records are read instead, so `stats` and `report` warn of the frame
//! as `decode` does and count what is left.
//!
//! One pass over the file with one reused buffer: the cost is reading the segment and
//! hashing it (bench/slice/RESULTS-verify.md), not decoding it.

use std::io::Read;
use std::path::Path;

use super::chunk::{is_frame_version, ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC};
use super::seal::{seal_problem, DumpId};

/// Why the frames of the segment file at `path` (segment number `segment` of the dump
/// whose id is `dump_id`) cannot all be trusted, naming the first bad frame's byte:
/// `None` when every frame passes its seal. Frames without a seal (a cupmon before the
/// seal, `dump_id` `None`) carry nothing to check them by: they pass.
pub fn segment_frames_problem(
    path: &Path,
    dump_id: Option<DumpId>,
    segment: u32,
) -> Option<String> {
    let (file, len) = match cupmon_files::open_regular(path) {
        Ok(f) => f,
        Err(e) => return Some(format!("could not be read to check its frames: {e}")),
    };
    let mut file = std::io::BufReader::with_capacity(1 << 20, file);
    let mut frame = Vec::new();
    let mut at = 0u64;
    while at < len {
        let mut raw = [0u8; CHUNK_HEADER_LEN];
        if file.read_exact(&mut raw).is_err() {
            return Some(format!("frame at byte {at}: its header is cut"));
        }
        let (magic, version, header) = ChunkHeader::parse(&raw);
        let size = u64::from(header.valid_size);
        if magic != CHUNK_MAGIC || !is_frame_version(version) {
            return Some(format!("byte {at}: no frame header where one should start"));
        }
        if at + CHUNK_HEADER_LEN as u64 + size > len {
            return Some(format!("frame at byte {at}: runs past the end of the file"));
        }
        frame.resize(size as usize, 0);
        if let Err(e) = file.read_exact(&mut frame) {
            return Some(format!("frame at byte {at}: {e}"));
        }
        if let Some(problem) = seal_problem(&header, &frame, dump_id, Some(segment)) {
            // Its first byte after the header, as the readers of records name it.
            let byte = at + CHUNK_HEADER_LEN as u64;
            return Some(format!("the frame at byte {byte} {problem}"));
        }
        at += CHUNK_HEADER_LEN as u64 + size;
    }
    None
}
