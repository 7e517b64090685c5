//! Keeping `user_annotations.jsonl.idx` (`annotation_index.rs`) up to date as the
//! log grows: a line per closed block, appended after the block's last log line.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use super::annotation_index::{parse_index, read_unindexed, Block};
use super::annotation_log::parse_entry;
use super::{USER_ANNOTATIONS_INDEX_FILE, USER_ANNOTATIONS_LOG_FILE};
use cupmon_files::replace_file;

/// The index writer of one log.
#[derive(Debug)]
pub(super) struct IndexWriter {
    /// The index file and the block still open; `None` once the index cannot describe
    /// the log any more (damage in the log before the new lines, a failed write).
    /// Readers then read the log past the index's end themselves: slower, not wrong.
    state: Option<(File, Block)>,
}

impl IndexWriter {
    /// The index of the log of the dump directory `dir`, brought up to date with the
    /// log's complete lines (a log an older cupmon wrote, or a session before this one).
    pub fn open(dir: &Path) -> Self {
        Self {
            state: resume(dir).ok().flatten(),
        }
    }

    /// The log got a line of `len` bytes (newline included) for `id`.
    pub fn add_line(&mut self, len: u64, id: u64) {
        let Some((file, block)) = &mut self.state else {
            return;
        };
        block.add_line(len, Some(id));
        if !block.is_full() {
            return;
        }
        // One write per line, as for the log: a kill leaves whole lines or a cut last
        // one, which readers drop.
        if file.write_all(block.index_line().as_bytes()).is_err() {
            self.state = None;
            return;
        }
        *block = block.next();
    }
}

/// Index the log's lines the index does not cover yet; `None` when the log cannot be
/// indexed past its damage.
fn resume(dir: &Path) -> io::Result<Option<(File, Block)>> {
    let log_path = dir.join(USER_ANNOTATIONS_LOG_FILE);
    let index_path = dir.join(USER_ANNOTATIONS_INDEX_FILE);
    let log_len = fs::metadata(&log_path)?.len();
    // Read by the rule every dump file is read by, as readers do.
    let old = cupmon_files::read_capped_if_present(&index_path, super::ANNOTATION_INDEX_CAP)
        .map_err(cupmon_files::FileError::into_io)?
        .unwrap_or_default();
    // Bad lines are left out of the index rewritten below.
    let (mut blocks, _) = parse_index(&old, log_len);
    let (start, bytes) = read_unindexed(&log_path, &mut blocks, log_len)?;
    let mut block = blocks
        .last()
        .map_or(Block::starting_at(0, 0, 0), Block::next);
    debug_assert_eq!(block.start, start);
    let mut sound = true;
    let mut rest = &bytes[..];
    while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
        let line = &rest[..newline];
        rest = &rest[newline + 1..];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let id = if line.is_empty() {
            None
        } else {
            match parse_entry(&String::from_utf8_lossy(line)) {
                Ok((id, _)) => Some(id),
                // Damage before the new lines: leave it, and all after it, unindexed.
                Err(_) => {
                    sound = false;
                    break;
                }
            }
        };
        block.add_line(newline as u64 + 1, id);
        if block.is_full() {
            blocks.push(block);
            block = block.next();
        }
    }
    // A cut last line: the next line appended runs on from it.
    sound &= rest.is_empty();
    let text: String = blocks.iter().map(Block::index_line).collect();
    if text.as_bytes() != old {
        replace_file(&index_path, text.as_bytes())?;
    }
    if !sound {
        return Ok(None);
    }
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(&index_path)?;
    Ok(Some((file, block)))
}
