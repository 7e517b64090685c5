//! A segment's digest on disk: `segments/seg-NNNNNN.digest`, JSON, written to a
//! temporary name and renamed when the segment closes, before its `closed` line goes
//! into the index (which then holds the file's XXH3-64, `digest_xxh3`). A missing or
//! older digest is not an error: readers then digest the segment's records, which
//! gives the same numbers, only slower. One that does not match its index line, its
//! segment or the dump is not used either, with a warning ([`stored_digest`]).

use std::io;
use std::path::Path;

use super::{Digest, DIGEST_VERSION};
use crate::dump::{checksum, checksum_hex, DumpId, SegmentFile, SegmentSummary};
use crate::ActivityKind;

/// `seg-000001.digest` for segment 1.
pub fn digest_file_name(segment: u32) -> String {
    format!("seg-{segment:06}.digest")
}

/// Write `digest` of `segment` into `segments_dir`; returns its bytes and their
/// XXH3-64 (16 hex digits, for the index line).
pub fn write_digest(
    segments_dir: &Path,
    segment: u32,
    digest: &Digest,
) -> io::Result<(u64, String)> {
    let bytes = serde_json::to_vec(digest).map_err(io::Error::other)?;
    let path = segments_dir.join(digest_file_name(segment));
    cupmon_files::replace_file(&path, &bytes)?;
    Ok((bytes.len() as u64, checksum_hex(checksum(&bytes))))
}

/// The digest of `segment`, if there is a sound one of this cupmon's version, read by
/// the rule every dump file is read by (a FIFO or a link to `/dev/zero` in its place is
/// no digest: the segment's records are read instead, which give the same numbers); no
/// check against its segment: see [`stored_digest`].
pub fn read_digest(segments_dir: &Path, segment: u32) -> Option<Digest> {
    let path = segments_dir.join(digest_file_name(segment));
    let bytes = cupmon_files::read_capped(&path, crate::dump::DIGEST_CAP).ok()?;
    let digest: Digest = serde_json::from_slice(&bytes).ok()?;
    (digest.version == DIGEST_VERSION).then_some(digest)
}

/// The stored digest that may stand for the records of `file` (a segment of the dump
/// `dump_id` names): `Ok(None)` when there is none to use (no digest, an older
/// version's, a segment not closed or not sound: its records are read, nothing to say),
/// `Err` with what is wrong when there is one that must not be used.
pub fn stored_digest(
    segments_dir: &Path,
    file: &SegmentFile,
    dump_id: Option<DumpId>,
) -> Result<Option<Digest>, String> {
    let Some(s) = file.summary.as_ref().filter(|_| file.sound) else {
        return Ok(None);
    };
    // By the rule every dump file is read by: a FIFO or a link to /dev/zero in its
    // place is no digest (the segment's records are read instead).
    let path = segments_dir.join(digest_file_name(file.segment));
    let bytes = match cupmon_files::read_capped_if_present(&path, crate::dump::DIGEST_CAP) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(None),
        Err(e) => return Err(e.problem()),
    };
    check_digest(&bytes, file.segment, s, dump_id)
}

/// The digest in `bytes`, checked as [`stored_digest`] checks a digest file against
/// its segment `segment`, that segment's index line `s` and the dump's id.
pub fn check_digest(
    bytes: &[u8],
    segment: u32,
    s: &SegmentSummary,
    dump_id: Option<DumpId>,
) -> Result<Option<Digest>, String> {
    if let Some(expected) = &s.digest_xxh3 {
        let found = checksum_hex(checksum(bytes));
        if &found != expected {
            return Err(format!(
                "its checksum {found} is not the {expected} its index line says: changed \
                 after it was written"
            ));
        }
    }
    let digest: Digest = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if digest.version != DIGEST_VERSION {
        return Ok(None);
    }
    match (&digest.dump_id, dump_id) {
        (Some(found), Some(id)) if *found == id.to_string() => {}
        (None, _) if s.digest_xxh3.is_none() => {}
        (found, _) => {
            return Err(format!(
                "belongs to another dump (dump id {}, this dump's is {})",
                found.as_deref().unwrap_or("none"),
                dump_id.map_or_else(|| "none".to_owned(), |i| i.to_string())
            ))
        }
    }
    if let Some(n) = digest.segment.filter(|&n| n != segment) {
        return Err(format!("is the digest of segment {n}"));
    }
    contradiction(&digest, s).map_or(Ok(Some(digest)), Err)
}

/// What in a digest contradicts its segment's index line, or itself; `None` when
/// nothing does. Only a whole digest is checked (a partial one is not used anyway).
fn contradiction(d: &Digest, s: &SegmentSummary) -> Option<String> {
    if !d.is_whole() {
        return None;
    }
    let says = |what: &str, found: u64, index: u64| {
        (found != index).then(|| {
            format!("it counts {found} {what} where the segment's index line says {index}")
        })
    };
    let by_kind: u64 = d.records_by_kind.values().sum();
    let kernel_records: u64 = [ActivityKind::KERNEL, ActivityKind::CONCURRENT_KERNEL]
        .iter()
        .filter_map(|k| d.records_by_kind.get(&k.as_u32()))
        .sum();
    let launches: u64 = d.kernels.iter().map(|k| k.launches).sum();
    let outside = match (d.first_ns, d.last_ns, s.first_ns, s.last_ns) {
        // A record with no start but an end is in the digest's span, not the index's.
        (Some(a), Some(b), Some(first), Some(last)) => a < first || (b > last && d.zero_start == 0),
        _ => false,
    };
    says("records", d.records, s.records)
        .or_else(|| says("buffers", d.chunks, s.chunks))
        .or_else(|| says("buffer bytes", d.buffer_bytes, s.buffer_bytes))
        .or_else(|| says("kernel records", kernel_records, s.kernels))
        .or_else(|| {
            (by_kind != d.records).then(|| {
                format!(
                    "its records by kind add up to {by_kind}, not its {} records",
                    d.records
                )
            })
        })
        .or_else(|| {
            (launches != kernel_records).then(|| {
                format!("it counts {launches} kernel launches for {kernel_records} kernel records")
            })
        })
        .or_else(|| outside.then(|| "its time span reaches outside its segment's".to_owned()))
}
