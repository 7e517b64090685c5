//! The user annotations of a dump as a reader sees them: `user_annotations.json`
//! (older dumps) under `user_annotations.jsonl`, the log read through its index
//! (`annotation_index.rs`) so that opening a dump and slicing it cost what the slice
//! needs, not what the recording holds.
//!
//! At open: the `.json` (small: only older cupmon wrote it) and the part of the log
//! the index does not cover (the last block, still filling; or all of a log without
//! index), whose last line is where a crash leaves its damage. The indexed blocks are
//! read on demand: all of them for [`DumpAnnotations::all`], those whose id range
//! holds a wanted id for [`DumpAnnotations::named`].

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::annotation_index::{parse_block, parse_index, read_range, read_unindexed, Block};
use super::annotation_log::parse_annotation_log;
use super::annotations::read_old_annotations;
use super::error::DumpError;
use super::warning::DumpWarning;
use super::{USER_ANNOTATIONS_INDEX_FILE, USER_ANNOTATIONS_LOG_FILE};

/// A dump's annotations, read as far as asked.
#[derive(Debug, Clone, Default)]
pub(super) struct DumpAnnotations {
    /// `user_annotations.json`'s entries (the log's win over them).
    old: BTreeMap<u64, String>,
    /// The log's indexed blocks; empty when everything is in `full` from the start.
    blocks: Vec<Block>,
    log: PathBuf,
    /// The log's length at open: later lines (a live recording) are not this dump's.
    log_len: u64,
    /// The entries of the log after its indexed blocks.
    unindexed: BTreeMap<u64, String>,
    /// Every annotation, once read.
    full: OnceLock<BTreeMap<u64, String>>,
}

impl DumpAnnotations {
    /// Read what opening the dump `dir` needs; damage a crash leaves (a cut last line
    /// of the log, a cut `.json`) comes back as warnings.
    pub fn open(dir: &Path) -> Result<(Self, Vec<DumpWarning>), DumpError> {
        let (old, mut warnings) = read_old_annotations(dir)?;
        let log = dir.join(USER_ANNOTATIONS_LOG_FILE);
        let io = |e| DumpError::io(USER_ANNOTATIONS_LOG_FILE, e);
        let log_len = match fs::metadata(&log) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(io(e)),
        };
        let mut blocks = match fs::read(dir.join(USER_ANNOTATIONS_INDEX_FILE)) {
            Ok(bytes) => parse_index(&bytes, log_len),
            // The index is a hint: without it the log is read whole, as before.
            Err(_) => Vec::new(),
        };
        let unindexed_bytes = if log_len == 0 {
            Vec::new()
        } else {
            read_unindexed(&log, &mut blocks, log_len).map_err(io)?.1
        };
        let (mut unindexed, damage) =
            parse_annotation_log(&unindexed_bytes, USER_ANNOTATIONS_LOG_FILE)
                .map_err(|e| after_blocks(e, blocks.last()))?;
        warnings.extend(damage.map(|w| after_blocks_warning(w, blocks.last())));
        let full = OnceLock::new();
        let mut old = old;
        if blocks.is_empty() {
            // All of the log is read already: no lookup needs the file again.
            old.append(&mut unindexed);
            let _ = full.set(std::mem::take(&mut old));
        }
        let annotations = Self {
            old,
            blocks,
            log,
            log_len,
            unindexed,
            full,
        };
        Ok((annotations, warnings))
    }

    /// Every annotation (the whole log read once, on the first call).
    pub fn all(&self) -> Result<&BTreeMap<u64, String>, DumpError> {
        if let Some(full) = self.full.get() {
            return Ok(full);
        }
        let mut full = self.old.clone();
        let bytes = read_range(&mut self.open_log()?, 0, self.log_len)
            .map_err(|e| DumpError::io(USER_ANNOTATIONS_LOG_FILE, e))?;
        // The same bytes as at open, so the same damage, already reported then.
        full.extend(parse_annotation_log(&bytes, USER_ANNOTATIONS_LOG_FILE)?.0);
        Ok(self.full.get_or_init(|| full))
    }

    /// The annotations of `ids` (those that have one), reading only the log's blocks
    /// that may name them.
    pub fn named(&self, ids: &BTreeSet<u64>) -> Result<BTreeMap<u64, String>, DumpError> {
        let pick = |map: &BTreeMap<u64, String>, out: &mut BTreeMap<u64, String>| {
            out.extend(
                ids.iter()
                    .filter_map(|id| map.get_key_value(id))
                    .map(|(&id, name)| (id, name.clone())),
            );
        };
        let mut out = BTreeMap::new();
        if let Some(full) = self.full.get() {
            pick(full, &mut out);
            return Ok(out);
        }
        pick(&self.old, &mut out);
        let wanted: Vec<&Block> = self.blocks.iter().filter(|b| b.may_name(ids)).collect();
        if !wanted.is_empty() {
            let mut log = self.open_log()?;
            for block in wanted {
                let Some(entries) = read_block(&mut log, block)? else {
                    // The log does not match its index (rewritten by other means):
                    // read it whole, which is right whatever the index says.
                    out.clear();
                    pick(self.all()?, &mut out);
                    return Ok(out);
                };
                // In log order: a later line for an id wins.
                out.extend(entries.into_iter().filter(|(id, _)| ids.contains(id)));
            }
        }
        pick(&self.unindexed, &mut out);
        Ok(out)
    }

    fn open_log(&self) -> Result<File, DumpError> {
        File::open(&self.log).map_err(|e| DumpError::io(USER_ANNOTATIONS_LOG_FILE, e))
    }
}

fn read_block(log: &mut File, block: &Block) -> Result<Option<Vec<(u64, String)>>, DumpError> {
    let bytes = read_range(log, block.start, block.end - block.start)
        .map_err(|e| DumpError::io(USER_ANNOTATIONS_LOG_FILE, e))?;
    parse_block(&bytes, block)
}

/// Line numbers of the unindexed part of the log counted from the log's start.
fn after_blocks(e: DumpError, last: Option<&Block>) -> DumpError {
    match e {
        DumpError::BadSideFile {
            file,
            line,
            problem,
        } => DumpError::BadSideFile {
            file,
            line: line + lines_before(last),
            problem,
        },
        other => other,
    }
}

fn after_blocks_warning(w: DumpWarning, last: Option<&Block>) -> DumpWarning {
    match w {
        DumpWarning::DamagedLastLine {
            file,
            line,
            problem,
            kept,
        } => DumpWarning::DamagedLastLine {
            file,
            line: line + lines_before(last),
            problem,
            kept: kept + last.map_or(0, |b| usize::try_from(b.total_entries()).unwrap_or(0)),
        },
        other => other,
    }
}

fn lines_before(last: Option<&Block>) -> usize {
    last.map_or(0, |b| usize::try_from(b.total_lines()).unwrap_or(0))
}
