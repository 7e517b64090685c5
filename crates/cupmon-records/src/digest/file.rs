//! A segment's digest on disk: `segments/seg-NNNNNN.digest`, JSON, written to a
//! temporary name and renamed when the segment closes, before its `closed` line goes
//! into the index. A missing, damaged or older digest is not an error: readers then
//! digest the segment's records, which gives the same numbers, only slower.

use std::fs;
use std::io;
use std::path::Path;

use super::{Digest, DIGEST_VERSION};

/// `seg-000001.digest` for segment 1.
pub fn digest_file_name(segment: u32) -> String {
    format!("seg-{segment:06}.digest")
}

/// Write `digest` of `segment` into `segments_dir`; returns its bytes.
pub fn write_digest(segments_dir: &Path, segment: u32, digest: &Digest) -> io::Result<u64> {
    let bytes = serde_json::to_vec(digest).map_err(io::Error::other)?;
    let path = segments_dir.join(digest_file_name(segment));
    let tmp = segments_dir.join(format!(".{}.tmp", digest_file_name(segment)));
    fs::write(&tmp, &bytes)?;
    fs::rename(&tmp, &path)?;
    Ok(bytes.len() as u64)
}

/// The digest of `segment`, if there is a sound one of this cupmon's version, read by
/// the rule every dump file is read by (a FIFO or a link to `/dev/zero` in its place is
/// no digest: the segment's records are read instead, which give the same numbers).
pub fn read_digest(segments_dir: &Path, segment: u32) -> Option<Digest> {
    let path = segments_dir.join(digest_file_name(segment));
    let bytes = cupmon_files::read_capped(&path, crate::dump::DIGEST_CAP).ok()?;
    let digest: Digest = serde_json::from_slice(&bytes).ok()?;
    (digest.version == DIGEST_VERSION).then_some(digest)
}
