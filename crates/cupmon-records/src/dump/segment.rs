//! The segments of a flight-recorder dump: `segments/seg-NNNNNN.cupmr`, files of
//! version-3 chunks (frames), numbered from 1 in the order they were written, and
//! `segments/index.jsonl`, one line appended per event: a segment closed (its time
//! span, counts, bytes and two clock samples) or retired (removed to keep the budget).
//! A segment with no `closed` line is the active one, or the one a killed process left:
//! readers scan its frames instead. A `retired` line is written before the file is
//! removed, so a file with one is retired even if it is still there.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dump_file::{read_side_file, SEGMENT_INDEX_CAP};
use super::error::DumpError;
use super::seal::{check_line, seal_line, DumpId};
use super::segment_audit::audit;
use super::warning::DumpWarning;

/// The folder of a dump that holds its segments.
pub const SEGMENTS_DIR: &str = "segments";
/// Its append-only log of closed and retired segments.
pub const SEGMENT_INDEX_FILE: &str = "index.jsonl";

/// `seg-000001.cupmr` for segment 1.
pub fn segment_file_name(segment: u32) -> String {
    format!("seg-{segment:06}.cupmr")
}

/// The segment number of a file named by [`segment_file_name`].
pub fn parse_segment_file_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("seg-")?.strip_suffix(".cupmr")?;
    (digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// What the index says of a closed segment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentSummary {
    pub segment: u32,
    /// Bytes of the file.
    pub bytes: u64,
    /// Activity-buffer bytes its frames hold once decompressed.
    pub buffer_bytes: u64,
    pub chunks: u64,
    pub records: u64,
    pub kernels: u64,
    /// First start and last end of its records on the Unix clock (ns).
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    /// The same for records on another client's clock, raw.
    pub foreign_first: Option<u64>,
    pub foreign_last: Option<u64>,
    /// (CUPTI clock, Unix ns) at the completion of its buffers while another client's
    /// clock set CUPTI's timestamps (none otherwise): what converts those records.
    pub clock: Vec<[u64; 2]>,
    pub opened_unix_ns: u64,
    pub closed_unix_ns: u64,
    /// Bytes of its digest file (`seg-NNNNNN.digest`; 0 without one).
    #[serde(default)]
    pub digest_bytes: u64,
    /// XXH3-64 of the digest file's bytes, 16 hex digits (none without a digest, or
    /// from a cupmon before the seal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest_xxh3: Option<String>,
    /// File offset of its last frame's chunk header (none before the seal): readers
    /// check that frame is there, as a zero-filled tail (a power loss) would not leave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_frame_at: Option<u64>,
}

/// One line of `index.jsonl` (without its newline): what it says, or what is wrong
/// with it (it does not parse, fails its checksum, or is zeros: a power loss).
pub fn parse_index_line(text: &str) -> Result<IndexLine, String> {
    if text.trim_matches('\0').is_empty() {
        return Err(format!("{} zero bytes, as a power loss leaves", text.len()));
    }
    check_line(text)?;
    serde_json::from_str::<IndexLine>(text).map_err(|e| e.to_string())
}

/// Why a segment was retired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetireReason {
    /// The dump would have exceeded `--keep`.
    Keep,
    /// Its records all ended longer ago than `--keep-for`.
    KeepFor,
}

/// One line of `index.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum IndexLine {
    Closed(SegmentSummary),
    Retired {
        segment: u32,
        reason: RetireReason,
        at_unix_ns: u64,
    },
}

/// What was retired, in all: the meta's `retired` key, and what `stats` and traces say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retired {
    pub segments: u64,
    pub bytes: u64,
    pub records: u64,
    pub kernels: u64,
    /// The span of the retired records (Unix ns).
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
}

impl Retired {
    pub fn add(&mut self, s: &SegmentSummary) {
        self.segments += 1;
        self.bytes += s.bytes + s.digest_bytes;
        self.records += s.records;
        self.kernels += s.kernels;
        self.first_ns = min_some(self.first_ns, s.first_ns);
        self.last_ns = self.last_ns.max(s.last_ns);
    }
}

fn min_some(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Appends lines to `index.jsonl`, each in one write.
#[derive(Debug)]
pub struct SegmentIndexLog {
    file: File,
}

impl SegmentIndexLog {
    pub fn open(segments_dir: &Path) -> io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(segments_dir.join(SEGMENT_INDEX_FILE))?;
        Ok(Self { file })
    }

    /// Append `line`, sealed with its checksum (`seal.rs`).
    pub fn append(&mut self, line: &IndexLine) -> io::Result<()> {
        let json = serde_json::to_string(line).map_err(io::Error::other)?;
        let mut bytes = seal_line(&json).into_bytes();
        bytes.push(b'\n');
        self.file.write_all(&bytes)
    }
}

/// A segment file of a dump, with what the index says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentFile {
    pub segment: u32,
    pub path: PathBuf,
    /// `None`: the active segment, or one a killed process left unclosed.
    pub summary: Option<SegmentSummary>,
    /// Whether its size and first frame are what its index line and the dump say:
    /// only then may its digest stand for its records (`segment_audit.rs`).
    pub sound: bool,
    /// Buffers that segments numbered between the previous live segment and this one
    /// held, by their index lines, but that are not read (missing, another dump's, a
    /// copy): buffer numbers stay their place in the dump (`export-parquet` keeps them
    /// between runs).
    pub buffers_lost_before: u64,
}

/// The live segments of a dump (in order), what was retired, and the damage seen in
/// the index and the segments' files (see `segment_audit.rs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SegmentList {
    pub live: Vec<SegmentFile>,
    pub retired: Retired,
    pub warnings: Vec<DumpWarning>,
    /// The dump's id that its segments' frames and digests must carry (`None`: a dump
    /// of a cupmon before the seal).
    pub dump_id: Option<DumpId>,
}

/// Read `dir/segments`: `None` when the dump has no such folder (a single-file dump).
/// The segments are checked against the meta's `dump_id` (see `segment_audit.rs`).
pub fn list_segments(dump_dir: &Path) -> Result<Option<SegmentList>, DumpError> {
    let meta = super::MetaFile::read(dump_dir.join(super::META_FILE)).ok();
    list_segments_of(dump_dir, meta.and_then(|m| m.dump_id()))
}

/// [`list_segments`] for a dump whose meta names `dump_id`.
pub(super) fn list_segments_of(
    dump_dir: &Path,
    dump_id: Option<DumpId>,
) -> Result<Option<SegmentList>, DumpError> {
    let dir = dump_dir.join(SEGMENTS_DIR);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(DumpError::io(SEGMENTS_DIR, e)),
    };
    let label = format!("{SEGMENTS_DIR}/{SEGMENT_INDEX_FILE}");
    let mut closed = BTreeMap::new();
    let mut retired_ids = BTreeMap::new();
    let mut list = SegmentList::default();
    let lost = "its segments were read without it (each scanned whole; what was retired is \
                unknown)";
    let index = dir.join(SEGMENT_INDEX_FILE);
    if let Some(bytes) = read_side_file(&index, &label, SEGMENT_INDEX_CAP, lost, &mut list.warnings)
    {
        // Any line that does not parse or fails its checksum is skipped with a
        // warning, whatever it says (a closed segment without its line is read from
        // its records); the lines after it are read.
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let text = String::from_utf8_lossy(line);
            let text = text.trim_end_matches('\r');
            if text.is_empty() {
                continue;
            }
            match parse_index_line(text) {
                Ok(IndexLine::Closed(s)) => {
                    closed.insert(s.segment, s);
                }
                Ok(IndexLine::Retired { segment, .. }) => {
                    retired_ids.insert(segment, ());
                }
                Err(problem) => list.warnings.push(DumpWarning::BadIndexLine {
                    file: label.clone(),
                    line: i + 1,
                    problem,
                }),
            }
        }
    }
    for id in retired_ids.keys() {
        if let Some(s) = closed.remove(id) {
            list.retired.add(&s);
        } else {
            list.retired.segments += 1;
        }
    }
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| DumpError::io(SEGMENTS_DIR, e))?;
        let name = entry.file_name();
        let Some(segment) = name.to_str().and_then(parse_segment_file_name) else {
            continue;
        };
        if retired_ids.contains_key(&segment) {
            continue;
        }
        files.push(SegmentFile {
            segment,
            path: entry.path(),
            summary: closed.get(&segment).cloned(),
            sound: false,
            buffers_lost_before: 0,
        });
    }
    files.sort_by_key(|f| f.segment);
    audit(&mut list, &dir, files, closed, dump_id);
    Ok(Some(list))
}
