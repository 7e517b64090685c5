//! Marks of closed segments whose every frame passed its seal, so that `stats` and
//! `report` check each segment once, not at every run: verifying costs reading the
//! segment (about 1 GB/s cold, 5 GB/s from the page cache on the shared VM,
//! bench/slice/RESULTS-verify.md), which for a dump of the default 10 GiB budget is
//! seconds where its digests take 0.05 s.
//!
//! A mark names the file as it was when verified: its segment number, device, inode,
//! size, modification and status-change times (ns) and its digest's checksum. Any
//! write to the file changes its ctime, which no one but root can set back: a segment
//! changed after its mark is verified again. (Damage that no write makes, a medium
//! returning other bytes, is found by every reader of the records, as before.)
//!
//! The marks live in the caller's own private directory (the CLI's cache, made by the
//! one rule for directories outside the output: mode 0700, of the effective user), one
//! file per dump id, never in the dump: whoever can write a dump could forge them
//! there. Without a directory set, there are no marks and every segment is verified.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::dump::{DumpId, SegmentFile};
use cupmon_files::replace_file;

static MARKS_DIR: OnceLock<PathBuf> = OnceLock::new();

/// The most a marks file is read (about 150,000 segments' marks).
const MARKS_CAP: u64 = 16 << 20;

/// Keep the marks of verified segments in `dir`, a directory only this user can write
/// (the caller checked it). Once per process; later calls change nothing.
pub fn remember_verified_segments_in(dir: PathBuf) {
    let _ = MARKS_DIR.set(dir);
}

/// The marks of one dump: those read, and those to add.
#[derive(Debug, Default)]
pub(crate) struct VerifiedMarks {
    path: Option<PathBuf>,
    known: HashSet<String>,
    new: Vec<String>,
}

impl VerifiedMarks {
    /// The marks kept for the dump `dump_id` (none without a directory or an id).
    pub fn load(dump_id: Option<DumpId>) -> Self {
        let (Some(dir), Some(id)) = (MARKS_DIR.get(), dump_id) else {
            return Self::default();
        };
        let path = dir.join(format!("{id}.verified"));
        let known = cupmon_files::read_capped_if_present(&path, MARKS_CAP)
            .ok()
            .flatten()
            .map(|bytes| {
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Self {
            path: Some(path),
            known,
            new: Vec::new(),
        }
    }

    /// The mark `file` would have now with its digest's checksum `digest_xxh3`;
    /// `None` when marks are not kept or the file cannot be looked at.
    pub fn mark_of(&self, file: &SegmentFile, digest_xxh3: Option<&str>) -> Option<String> {
        self.path.as_ref()?;
        let m = std::fs::symlink_metadata(&file.path).ok()?;
        Some(format!(
            "{} {} {} {} {}.{:09} {}.{:09} {}",
            file.segment,
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
            digest_xxh3.unwrap_or("-")
        ))
    }

    pub fn contains(&self, mark: &str) -> bool {
        self.known.contains(mark)
    }

    pub fn add(&mut self, mark: String) {
        self.new.push(mark);
    }

    /// Write the marks (old and new) back, whole or not at all. Best effort: a mark
    /// only saves time, so a failure leaves the segments to be verified next time.
    pub fn save(self) {
        let Some(path) = self.path.filter(|_| !self.new.is_empty()) else {
            return;
        };
        let mut lines: Vec<&String> = self.known.iter().chain(&self.new).collect();
        lines.sort_unstable();
        lines.dedup();
        let mut text = String::new();
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        let _ = replace_file(&path, text.as_bytes());
    }
}
