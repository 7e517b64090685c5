//! What ties a segment's frames, its digest and its index line to one dump, and says
//! whether their bytes are the ones written: a random *dump id* (the meta's `dump_id`,
//! 16 hex digits) and XXH3-64 checksums.
//!
//! A frame of chunk version 4 (a *sealed* frame) has a 24-byte seal between its time
//! index and its compact buffer, little-endian `<QIIQ>`: the dump id, the segment
//! number the frame was written into, 0 (reserved), and the XXH3-64 of the chunk
//! header's bytes 8..48 (version, index, stream, size, context, completion times),
//! the time index, the seal's first 16 bytes and the compact buffer. Version-3 frames
//! (cupmon before the seal) have none and are read as before.
//!
//! A digest carries the dump id and its segment as JSON keys, and the `closed` index
//! line the XXH3-64 of the digest file's bytes (`digest_xxh3`). Each index line ends
//! with `,"xxh3":"<16 hex>"}`, the XXH3-64 of the line's bytes before that suffix.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use twox_hash::XxHash3_64;

use super::chunk::{ChunkHeader, CHUNK_HEADER_LEN};
use super::frame::FRAME_INDEX_LEN;

/// Bytes of a sealed frame's seal (after its time index).
pub const SEAL_LEN: usize = 24;

/// A dump's identity: random, never 0 (0 would read as "none").
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DumpId(pub u64);

impl DumpId {
    /// A fresh id: the process's randomly keyed hasher (keys from the OS) over the
    /// time and the pid, so two writers never share one in practice.
    pub fn generate() -> Self {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        h.write_u128(now);
        h.write_u32(std::process::id());
        Self(h.finish().max(1))
    }

    /// The id written as 16 hex digits; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        if text.len() != 16 {
            return None;
        }
        u64::from_str_radix(text, 16)
            .ok()
            .filter(|&v| v != 0)
            .map(Self)
    }
}

impl fmt::Display for DumpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Debug for DumpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The seal of a sealed frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSeal {
    pub dump: DumpId,
    pub segment: u32,
    pub checksum: u64,
}

impl FrameSeal {
    /// The seal of `frame` (its time index, then [`SEAL_LEN`] bytes, then its compact
    /// buffer); `None` when the frame is too short to hold one.
    pub fn parse(frame: &[u8]) -> Option<Self> {
        let b = frame.get(FRAME_INDEX_LEN..FRAME_INDEX_LEN + SEAL_LEN)?;
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        Some(Self {
            dump: DumpId(u64_at(0)),
            segment: u32::from_le_bytes(b[8..12].try_into().unwrap_or_default()),
            checksum: u64_at(16),
        })
    }

    /// Fill in the seal of `frame` (whose seal bytes are reserved) for the chunk
    /// `header` that will carry it.
    pub fn write(frame: &mut [u8], header: &[u8; CHUNK_HEADER_LEN], dump: DumpId, segment: u32) {
        let seal = &mut frame[FRAME_INDEX_LEN..FRAME_INDEX_LEN + SEAL_LEN];
        seal[0..8].copy_from_slice(&dump.0.to_le_bytes());
        seal[8..12].copy_from_slice(&segment.to_le_bytes());
        seal[12..16].fill(0);
        let checksum = frame_checksum(header, frame);
        frame[FRAME_INDEX_LEN + 16..FRAME_INDEX_LEN + SEAL_LEN]
            .copy_from_slice(&checksum.to_le_bytes());
    }

    /// Whether `frame`'s bytes, under `header`, are those the seal was made for.
    pub fn matches(&self, header: &[u8; CHUNK_HEADER_LEN], frame: &[u8]) -> bool {
        frame.len() >= FRAME_INDEX_LEN + SEAL_LEN && frame_checksum(header, frame) == self.checksum
    }
}

/// What is wrong with a frame's seal (`seal.rs`), if anything: a sealed frame must
/// pass its checksum and carry this dump's id and its segment's number; in a dump whose
/// frames carry an id, one without a seal is not this dump's.
// Once per frame, out of line: inlined, it grew `next_buffer` enough to cost the
// whole decode 1-2% (bench-parquet decode, bench/parquet/RESULTS.md, sealed frames).
#[inline(never)]
pub(super) fn seal_problem(
    header: &ChunkHeader,
    frame: &[u8],
    dump_id: Option<DumpId>,
    segment: Option<u32>,
) -> Option<String> {
    if !header.sealed {
        return dump_id.map(|id| {
            format!("carries no dump id (this dump's frames carry {id}): another dump's")
        });
    }
    let seal = FrameSeal::parse(frame)?;
    if !seal.matches(&header.to_bytes(), frame) {
        return Some("fails its checksum: its bytes changed after they were written".to_owned());
    }
    if Some(seal.dump) != dump_id {
        let expected = dump_id.map_or_else(|| "none".to_owned(), |i| i.to_string());
        return Some(format!(
            "belongs to another dump (dump id {}, this dump's is {expected})",
            seal.dump
        ));
    }
    match segment {
        Some(n) if n != seal.segment => Some(format!(
            "was written into segment {} (a copy): not counted twice",
            seal.segment
        )),
        _ => None,
    }
}

/// The checksum a sealed frame carries (see the module docs).
fn frame_checksum(header: &[u8; CHUNK_HEADER_LEN], frame: &[u8]) -> u64 {
    let mut h = XxHash3_64::with_seed(0);
    h.write(&header[8..]);
    h.write(&frame[..FRAME_INDEX_LEN + 16]);
    h.write(&frame[FRAME_INDEX_LEN + SEAL_LEN..]);
    h.finish()
}

/// XXH3-64 of `bytes`, as digests and index lines are checked.
pub fn checksum(bytes: &[u8]) -> u64 {
    XxHash3_64::oneshot(bytes)
}

/// A checksum as the JSON files write it: 16 hex digits.
pub fn checksum_hex(sum: u64) -> String {
    format!("{sum:016x}")
}

/// The suffix an index line's checksum takes: `,"xxh3":"` 16 hex digits `"}`.
const LINE_SUM_KEY: &str = ",\"xxh3\":\"";
const LINE_SUM_LEN: usize = LINE_SUM_KEY.len() + 16 + 2;

/// `json` (one JSON object) with its checksum as its last key.
pub fn seal_line(json: &str) -> String {
    let body = json.strip_suffix('}').unwrap_or(json);
    format!(
        "{body}{LINE_SUM_KEY}{}\"}}",
        checksum_hex(checksum(body.as_bytes()))
    )
}

/// What a line's checksum says: `Ok(true)` it holds, `Ok(false)` the line has none (an
/// older cupmon wrote it), `Err` it does not hold.
pub fn check_line(line: &str) -> Result<bool, String> {
    let Some(at) = line.len().checked_sub(LINE_SUM_LEN) else {
        return Ok(false);
    };
    let (Some(body), Some(suffix)) = (line.get(..at), line.get(at..)) else {
        return Ok(false);
    };
    let Some(hex) = suffix
        .strip_prefix(LINE_SUM_KEY)
        .and_then(|s| s.strip_suffix("\"}"))
    else {
        return Ok(false);
    };
    let found = u64::from_str_radix(hex, 16).map_err(|_| format!("checksum {hex:?} is not hex"))?;
    let expected = checksum(body.as_bytes());
    if found == expected {
        Ok(true)
    } else {
        Err(format!(
            "checksum {hex} does not match the line's bytes ({}): changed after it was written",
            checksum_hex(expected)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_never_zero_and_round_trip_as_hex() {
        let a = DumpId::generate();
        let b = DumpId::generate();
        assert_ne!(a, b);
        assert_ne!(a.0, 0);
        assert_eq!(DumpId::parse(&a.to_string()), Some(a));
        assert_eq!(DumpId::parse("0000000000000000"), None);
        assert_eq!(DumpId::parse("12"), None);
    }

    #[test]
    fn a_frame_seal_sees_any_flipped_byte() {
        let header = [7u8; CHUNK_HEADER_LEN];
        let mut frame = vec![3u8; FRAME_INDEX_LEN + SEAL_LEN + 100];
        FrameSeal::write(&mut frame, &header, DumpId(42), 5);
        let seal = FrameSeal::parse(&frame).unwrap();
        assert_eq!((seal.dump, seal.segment), (DumpId(42), 5));
        assert!(seal.matches(&header, &frame));
        for i in
            (0..frame.len()).filter(|i| !(FRAME_INDEX_LEN + 16..FRAME_INDEX_LEN + 24).contains(i))
        {
            let mut bad = frame.clone();
            bad[i] ^= 1;
            assert!(!seal.matches(&header, &bad), "byte {i}");
        }
        let mut bad_header = header;
        bad_header[40] ^= 1;
        assert!(!seal.matches(&bad_header, &frame));
    }

    #[test]
    fn a_line_checksum_holds_until_the_line_changes() {
        let line = seal_line(r#"{"event":"closed","segment":3}"#);
        assert!(line.ends_with("\"}"), "{line}");
        assert_eq!(check_line(&line), Ok(true));
        assert_eq!(check_line(r#"{"event":"closed","segment":3}"#), Ok(false));
        let changed = line.replace("\"segment\":3", "\"segment\":4");
        assert!(check_line(&changed).is_err());
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["segment"], 3);
    }
}
