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
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cupmon_files::FileError;

use super::annotation_index::{parse_block, parse_index, read_range, read_unindexed, Block};
use super::annotation_log::{parse_annotation_log, LOG_LOST};
use super::annotations::read_old_annotations;
use super::dump_file::{
    read_side_file, refused, refused_error, ANNOTATION_INDEX_CAP, USER_ANNOTATIONS_CAP,
};
use super::error::DumpError;
use super::side_lines::parse_inner_lines;
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
    /// The entries of the log after its indexed blocks.
    unindexed: BTreeMap<u64, String>,
    /// Every annotation, once read, and the damage reading the indexed blocks found.
    full: OnceLock<(BTreeMap<u64, String>, Vec<DumpWarning>)>,
}

impl DumpAnnotations {
    /// Read what opening the dump `dir` needs; damage (a cut last line of the log, bad
    /// lines, a cut `.json`, a file refused by the rule every dump file is read by)
    /// comes back as warnings.
    pub fn open(dir: &Path) -> (Self, Vec<DumpWarning>) {
        let (old, mut warnings) = read_old_annotations(dir);
        let log = dir.join(USER_ANNOTATIONS_LOG_FILE);
        // The log's length at open: later lines (a live recording) are not this dump's.
        let log_len = match log_length(&log) {
            Ok(len) => len,
            Err(e) => {
                warnings.push(refused(USER_ANNOTATIONS_LOG_FILE, &e, LOG_LOST));
                0
            }
        };
        let index = dir.join(USER_ANNOTATIONS_INDEX_FILE);
        let lost = "the log was read without it";
        let mut blocks = if log_len == 0 {
            Vec::new()
        } else {
            match read_side_file(
                &index,
                USER_ANNOTATIONS_INDEX_FILE,
                ANNOTATION_INDEX_CAP,
                lost,
                &mut warnings,
            ) {
                Some(bytes) => {
                    let (blocks, damage) = parse_index(&bytes, log_len);
                    warnings.extend(damage.map(|d| DumpWarning::BadLines {
                        file: USER_ANNOTATIONS_INDEX_FILE.to_owned(),
                        lines: d.lines,
                        first_line: d.first_line,
                        first_problem: d.first_problem.to_owned(),
                        kept: blocks.len(),
                    }));
                    blocks
                }
                // The index is a hint: without it the log is read whole, as before.
                None => Vec::new(),
            }
        };
        let unindexed_bytes = if log_len == 0 {
            Vec::new()
        } else {
            match read_unindexed(&log, &mut blocks, log_len) {
                Ok((_, bytes)) => bytes,
                Err(e) => {
                    warnings.push(DumpWarning::Unreadable {
                        file: USER_ANNOTATIONS_LOG_FILE.to_owned(),
                        problem: e.to_string(),
                        lost: LOG_LOST.to_owned(),
                    });
                    blocks.clear();
                    Vec::new()
                }
            }
        };
        let (mut unindexed, damage) =
            parse_annotation_log(&unindexed_bytes, USER_ANNOTATIONS_LOG_FILE);
        warnings.extend(damage.into_iter().map(|w| after_blocks(w, blocks.last())));
        let full = OnceLock::new();
        let mut old = old;
        if blocks.is_empty() {
            // All of the log is read already: no lookup needs the file again.
            old.append(&mut unindexed);
            let _ = full.set((std::mem::take(&mut old), Vec::new()));
        }
        let annotations = Self {
            old,
            blocks,
            log,
            unindexed,
            full,
        };
        (annotations, warnings)
    }

    /// Every annotation (the whole log read once, on the first call).
    pub fn all(&self) -> Result<&BTreeMap<u64, String>, DumpError> {
        if let Some((full, _)) = self.full.get() {
            return Ok(full);
        }
        let mut full = self.old.clone();
        // The indexed blocks: whole lines, the last of them no crash's doing. The rest
        // was read at open (and its damage reported then).
        let indexed_end = self.blocks.last().map_or(0, |b| b.end);
        let bytes = read_range(&mut self.open_log()?, 0, indexed_end)
            .map_err(|e| DumpError::io(USER_ANNOTATIONS_LOG_FILE, e))?;
        let mut damage = Vec::new();
        damage.extend(parse_inner_lines(
            &bytes,
            USER_ANNOTATIONS_LOG_FILE,
            |line| {
                let (id, name) = super::annotation_log::parse_entry(line)?;
                full.insert(id, name);
                Ok(())
            },
        ));
        full.extend(self.unindexed.iter().map(|(&id, name)| (id, name.clone())));
        Ok(&self.full.get_or_init(|| (full, damage)).0)
    }

    /// Damage that reading the indexed blocks found after open (see
    /// [`super::Dump::annotation_warnings`]).
    pub fn late_warnings(&self) -> Vec<DumpWarning> {
        self.full.get().map(|(_, w)| w.clone()).unwrap_or_default()
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
        if let Some((full, _)) = self.full.get() {
            pick(full, &mut out);
            return Ok(out);
        }
        pick(&self.old, &mut out);
        let wanted: Vec<&Block> = self.blocks.iter().filter(|b| b.may_name(ids)).collect();
        if !wanted.is_empty() {
            let mut log = self.open_log()?;
            for block in wanted {
                let Some(entries) = read_block(&mut log, block)? else {
                    // The log does not match its index (rewritten by other means, or a
                    // bad line): read it whole, which is right whatever the index says
                    // and counts the bad lines.
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
        cupmon_files::open_regular(&self.log)
            .map(|(file, _)| file)
            .map_err(|e| refused_error(USER_ANNOTATIONS_LOG_FILE, e))
    }
}

/// The log's length, by the rule every dump file is read by (0 when there is none).
fn log_length(log: &Path) -> Result<u64, FileError> {
    let Some((_, len)) = cupmon_files::open_regular_if_present(log)? else {
        return Ok(0);
    };
    if len > USER_ANNOTATIONS_CAP {
        return Err(FileError::TooLarge {
            path: log.to_path_buf(),
            size: len,
            cap: USER_ANNOTATIONS_CAP,
        });
    }
    Ok(len)
}

fn read_block(log: &mut File, block: &Block) -> Result<Option<Vec<(u64, String)>>, DumpError> {
    let bytes = read_range(log, block.start, block.end - block.start)
        .map_err(|e| DumpError::io(USER_ANNOTATIONS_LOG_FILE, e))?;
    Ok(parse_block(&bytes, block))
}

/// A warning about the unindexed part of the log, its lines and entries counted from
/// the log's start.
fn after_blocks(w: DumpWarning, last: Option<&Block>) -> DumpWarning {
    let lines_before = last.map_or(0, |b| usize::try_from(b.total_lines()).unwrap_or(0));
    let entries_before = last.map_or(0, |b| usize::try_from(b.total_entries()).unwrap_or(0));
    match w {
        DumpWarning::DamagedLastLine {
            file,
            line,
            problem,
            kept,
        } => DumpWarning::DamagedLastLine {
            file,
            line: line + lines_before,
            problem,
            kept: kept + entries_before,
        },
        DumpWarning::BadLines {
            file,
            lines,
            first_line,
            first_problem,
            kept,
        } => DumpWarning::BadLines {
            file,
            lines,
            first_line: first_line + lines_before,
            first_problem,
            kept: kept + entries_before,
        },
        other => other,
    }
}
