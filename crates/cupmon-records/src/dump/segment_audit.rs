//! The look every reader takes at a dump's segments before reading any: each closed
//! segment against its `index.jsonl` line, each file's first frame against the dump.
//!
//! - A closed segment whose file is gone (only its digest left, or nothing) is lost: a
//!   warning with what its index line says it held.
//! - A file whose first frame carries another dump's id (or none, in a dump whose
//!   frames carry one) is another dump's: not read, with a warning.
//! - A file whose first frame says it was written as another segment, or whose first
//!   chunk header and time index are those of an earlier file (older dumps, no id), is
//!   a copy: not read, so nothing is counted twice. Of two copies the one whose index
//!   line matches its size is kept, else the lower number.
//! - A closed segment is *sound* when its size is its index line's, its first and
//!   last frames' headers are whole (the last where its index line says) and it does
//!   not end in zeros (what a power loss leaves): only then may its digest stand for
//!   its records. Frames' checksums are not read here (that would mean reading the
//!   segments, which the digests spare `stats` and `report`): every reader of records
//!   checks each frame it reads. Segments that are not sound are read (a damaged
//!   start is stepped over like any damage) and, once read, compared with their index
//!   line (`buffers.rs`): what was lost is said.
//!
//! Three small reads per segment: its first and last frames' heads and its last bytes.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::chunk::{is_frame_version, ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC};
use super::frame::FRAME_INDEX_LEN;
use super::seal::{DumpId, FrameSeal, SEAL_LEN};
use super::segment::{segment_file_name, SegmentFile, SegmentList, SegmentSummary, SEGMENTS_DIR};
use super::segment_damage::{IndexSays, SegmentLoss};
use super::warning::DumpWarning;
use crate::digest::digest_file_name;

/// The start of a segment file.
#[derive(Debug, Clone)]
struct Look {
    len: u64,
    /// Its first chunk header and time index, when the header is whole and a frame's.
    fingerprint: Option<Vec<u8>>,
    /// Its first frame's seal: `Some(None)` for a frame without one.
    seal: Option<Option<FrameSeal>>,
    /// Whether its last frame is where its index line says (`None`: no place given).
    last_frame_whole: Option<bool>,
}

/// A run of zeros this long ending the file is a zero-filled tail (a disk sector, as
/// the chunk reader calls it): compressed frames and activity records never end so.
const ZERO_TAIL: u64 = 512;

/// A chunk header, a time index and a seal.
const HEAD_LEN: usize = CHUNK_HEADER_LEN + FRAME_INDEX_LEN + SEAL_LEN;

fn look_at(path: &Path, last_frame_at: Option<u64>) -> Look {
    let mut look = Look {
        len: 0,
        fingerprint: None,
        seal: None,
        last_frame_whole: None,
    };
    // Not through a planted link, never blocking on a FIFO: a segment that is not a
    // regular file looks empty here, and its readers say what it is.
    let Ok((mut file, len)) = cupmon_files::open_regular(path) else {
        return look;
    };
    look.len = len;
    let Some((head, header)) = frame_head(&mut file, look.len) else {
        return look;
    };
    look.fingerprint = Some(head[..CHUNK_HEADER_LEN + FRAME_INDEX_LEN].to_vec());
    look.seal = Some(
        header
            .sealed
            .then(|| FrameSeal::parse(&head[CHUNK_HEADER_LEN..]))
            .flatten(),
    );
    if let Some(at) = last_frame_at {
        // The last frame must be where the index line says, whole, ending the file, of
        // the same dump and segment as the first, and not end in zeros (a power loss
        // that cut into it).
        let whole = file.seek(SeekFrom::Start(at)).is_ok()
            && frame_head(&mut file, look.len - at.min(look.len)).is_some_and(|(h, last)| {
                at + (CHUNK_HEADER_LEN as u64) + u64::from(last.valid_size) == look.len
                    && (!last.sealed
                        || FrameSeal::parse(&h[CHUNK_HEADER_LEN..]).map(|s| (s.dump, s.segment))
                            == look.seal.flatten().map(|s| (s.dump, s.segment)))
            })
            && !ends_in_zeros(&mut file, look.len);
        look.last_frame_whole = Some(whole);
    }
    look
}

/// Whether the file's last [`ZERO_TAIL`] bytes are all zero.
fn ends_in_zeros(file: &mut File, len: u64) -> bool {
    let n = ZERO_TAIL.min(len);
    let mut tail = [0u8; ZERO_TAIL as usize];
    let tail = &mut tail[..n as usize];
    file.seek(SeekFrom::Start(len - n)).is_ok()
        && file.read_exact(tail).is_ok()
        && tail.iter().all(|&b| b == 0)
}

/// The chunk header, time index and seal at `file`'s position, when the header is a
/// frame's and whole within the `left` bytes from there.
fn frame_head(file: &mut File, left: u64) -> Option<([u8; HEAD_LEN], ChunkHeader)> {
    let mut head = [0u8; HEAD_LEN];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    let raw = head.first_chunk::<CHUNK_HEADER_LEN>()?;
    let (magic, version, header) = ChunkHeader::parse(raw);
    let size = u64::from(header.valid_size);
    let body_at = header.frame_body_at();
    let whole = got >= CHUNK_HEADER_LEN + body_at
        && magic == CHUNK_MAGIC
        && is_frame_version(version)
        && size >= body_at as u64
        && CHUNK_HEADER_LEN as u64 + size <= left;
    whole.then_some((head, header))
}

/// Check `files` (the segment files found, in order) and `closed` (the index's closed
/// segments not retired) as the module docs say, into `list`.
pub(super) fn audit(
    list: &mut SegmentList,
    dir: &Path,
    files: Vec<SegmentFile>,
    closed: BTreeMap<u32, SegmentSummary>,
    meta_id: Option<DumpId>,
) {
    let label = |segment: u32| format!("{SEGMENTS_DIR}/{}", segment_file_name(segment));
    let looks: Vec<Look> = files
        .iter()
        .map(|f| look_at(&f.path, f.summary.as_ref().and_then(|s| s.last_frame_at)))
        .collect();
    let expected = meta_id.or_else(|| common_id(&looks));
    list.dump_id = expected;
    let present: Vec<u32> = files.iter().map(|f| f.segment).collect();
    for (segment, s) in &closed {
        if present.binary_search(segment).is_err() {
            let digest_left = dir.join(digest_file_name(*segment)).exists();
            list.warnings.push(DumpWarning::SegmentLost {
                file: label(*segment),
                why: SegmentLoss::Missing { digest_left },
                index: Some(IndexSays::of(s)),
            });
        }
    }
    let mut kept: Vec<(SegmentFile, Look)> = Vec::new();
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    for (mut file, look) in files.into_iter().zip(looks) {
        let lost = |why| DumpWarning::SegmentLost {
            file: label(file.segment),
            why,
            index: file.summary.as_ref().map(IndexSays::of),
        };
        match look.seal {
            Some(seal) if seal.map(|s| s.dump) != expected => {
                list.warnings.push(lost(SegmentLoss::Foreign {
                    found: seal.map(|s| s.dump),
                    expected,
                }));
                continue;
            }
            Some(Some(seal)) if seal.segment != file.segment => {
                list.warnings
                    .push(lost(SegmentLoss::Copy { of: seal.segment }));
                continue;
            }
            _ => {}
        }
        file.sound = look.fingerprint.is_some()
            && look.last_frame_whole != Some(false)
            && file.summary.as_ref().is_some_and(|s| s.bytes == look.len);
        let Some(print) = look.fingerprint.clone() else {
            kept.push((file, look));
            continue;
        };
        match seen.get(&print) {
            None => {
                seen.insert(print, kept.len());
                kept.push((file, look));
            }
            Some(&earlier) => {
                // Keep the one whose index line matches it; else the earlier one.
                let (drop, keep_at) = if !kept[earlier].0.sound && file.sound {
                    (std::mem::replace(&mut kept[earlier].0, file), earlier)
                } else {
                    (file, earlier)
                };
                let of = kept[keep_at].0.segment;
                list.warnings.push(DumpWarning::SegmentLost {
                    file: label(drop.segment),
                    why: SegmentLoss::Copy { of },
                    index: drop.summary.as_ref().map(IndexSays::of),
                });
            }
        }
    }
    list.live = kept.into_iter().map(|(f, _)| f).collect();
    list.live.sort_by_key(|f| f.segment);
    // The buffers of closed segments not read, between two that are.
    for i in 1..list.live.len() {
        let (before, at) = (list.live[i - 1].segment, list.live[i].segment);
        let lost = closed
            .range(before + 1..at)
            .map(|(_, s)| s.chunks)
            .fold(0, u64::saturating_add);
        list.live[i].buffers_lost_before = lost;
    }
}

/// A dump whose meta names no id (one of a cupmon before the seal, or a meta that lost
/// the key): the id most of its segments' first frames carry, if they all carry one.
fn common_id(looks: &[Look]) -> Option<DumpId> {
    let mut counts: BTreeMap<DumpId, usize> = BTreeMap::new();
    for look in looks {
        match look.seal {
            Some(Some(seal)) => *counts.entry(seal.dump).or_default() += 1,
            // A frame without a seal: an older cupmon wrote this dump.
            Some(None) => return None,
            None => {}
        }
    }
    counts.into_iter().max_by_key(|&(_, n)| n).map(|(id, _)| id)
}
