//! `user_annotations.jsonl.idx`: a sparse index of `user_annotations.jsonl`, so that a
//! slice of a long recording reads the few log lines that name its annotations, not
//! the whole log (24 h of one annotation per training step is 168,000 lines, and
//! parsing them cost a one-second slice more than the slice itself).
//!
//! One line per block of the log (`BLOCK_ENTRIES` lines or `BLOCK_BYTES` bytes):
//! `<end byte>\t<lines>\t<entries>\t<min id>\t<max id>\n`, where the end byte and the
//! counts of lines and of entries (non-empty lines) run from the start of the log, and
//! the ids are the block's smallest and largest. Ids are not assumed sorted: the
//! monitor hands them out in push order but threads may log them out of order, and a
//! second session in the same directory starts again from the first id; a block whose
//! range holds a wanted id is read, whatever the order.
//!
//! The writer of the log writes the index (`AnnotationLog`), a block's line after the
//! block's last log line, so the index never describes bytes the log lacks. The index
//! is a hint: readers skip its bad lines (counted: the block after one then spans the
//! skipped one too, with no id range, so it is read for any id), stop at a cut line
//! or one past the log's end, and read everything after what it covers from the log
//! itself. A dump without it (older cupmon) is read whole, as before.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::annotation_log::parse_entry;

/// Log lines per block: a block is ~20 KiB of log for names like "step 123456".
pub(super) const BLOCK_ENTRIES: u64 = 512;
/// At most this many bytes per block (long names), so a lookup reads little.
pub(super) const BLOCK_BYTES: u64 = 64 << 10;

/// One block of the log, as the index describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Block {
    /// Byte range of the block's lines in the log (the last byte is a newline).
    pub start: u64,
    pub end: u64,
    /// Lines and entries of the log before the block.
    pub lines_before: u64,
    pub entries_before: u64,
    /// Lines and entries of the block itself.
    pub lines: u64,
    pub entries: u64,
    /// Smallest and largest id of the block's entries (`min > max` for none).
    pub min: u64,
    pub max: u64,
}

impl Block {
    /// Whether the block may hold a line for one of `ids`.
    pub fn may_name(&self, ids: &BTreeSet<u64>) -> bool {
        self.min <= self.max && ids.range(self.min..=self.max).next().is_some()
    }

    /// The block's line of the index file.
    pub fn index_line(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}",
            self.end,
            self.lines_before + self.lines,
            self.entries_before + self.entries,
            self.min,
            self.max
        );
        out
    }
}

/// Bad lines of an index file: how many, the first (from 1) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct IndexDamage {
    pub lines: usize,
    pub first_line: usize,
    pub first_problem: &'static str,
}

/// The blocks of an index file's `bytes` that describe the first `log_len` bytes of
/// the log, up to its first line that is cut or past the log's end; its bad lines are
/// skipped (the block after one spans it) and counted.
pub(super) fn parse_index(bytes: &[u8], log_len: u64) -> (Vec<Block>, Option<IndexDamage>) {
    let mut blocks: Vec<Block> = Vec::new();
    let mut damage: Option<IndexDamage> = None;
    let mut after_bad = false;
    let mut rest = bytes;
    let mut number = 0;
    while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
        let line = &rest[..newline];
        rest = &rest[newline + 1..];
        number += 1;
        match parse_index_line(line, blocks.last(), after_bad) {
            Ok(block) if block.end > log_len => break,
            Ok(block) => {
                blocks.push(block);
                after_bad = false;
            }
            Err(problem) => {
                after_bad = true;
                match &mut damage {
                    Some(d) => d.lines += 1,
                    None => {
                        damage = Some(IndexDamage {
                            lines: 1,
                            first_line: number,
                            first_problem: problem,
                        })
                    }
                }
            }
        }
    }
    (blocks, damage)
}

/// The block of an index line after `previous`; `after_bad`: bad lines come between,
/// so the block spans theirs too and its ids are unknown.
fn parse_index_line(
    line: &[u8],
    previous: Option<&Block>,
    after_bad: bool,
) -> Result<Block, &'static str> {
    const NOT_FIVE: &str = "not five TAB-separated whole numbers";
    let text = std::str::from_utf8(line).map_err(|_| NOT_FIVE)?;
    let mut fields = text.split('\t').map(|f| f.parse::<u64>().ok());
    let mut next = || fields.next().flatten().ok_or(NOT_FIVE);
    let (end, lines, entries, min, max) = (next()?, next()?, next()?, next()?, next()?);
    if fields.next().is_some() {
        return Err(NOT_FIVE);
    }
    let zero = Block::starting_at(0, 0, 0);
    let before = previous.map_or(zero, |p| {
        Block::starting_at(p.end, p.total_lines(), p.total_entries())
    });
    const BACKWARDS: &str = "its counts of lines or entries run backwards";
    let mut block = Block {
        end,
        lines: lines.checked_sub(before.lines_before).ok_or(BACKWARDS)?,
        entries: entries
            .checked_sub(before.entries_before)
            .ok_or(BACKWARDS)?,
        min,
        max,
        ..before
    };
    // Every block ends with a newline, so it has a line per newline and at least one.
    let sound = block.end > block.start
        && block.lines >= 1
        && block.lines <= block.end - block.start
        && block.entries <= block.lines;
    if !sound {
        return Err("its end byte and counts do not fit the lines before it");
    }
    if after_bad {
        // The ids of the skipped blocks are unknown: read this one for any id.
        (block.min, block.max) = if block.entries == 0 {
            (u64::MAX, 0)
        } else {
            (0, u64::MAX)
        };
    } else if (block.entries == 0) != (min > max) {
        return Err("its id range does not fit its count of entries");
    }
    Ok(block)
}

impl Block {
    /// An empty block after `lines` lines and `entries` entries ending at `start`.
    pub fn starting_at(start: u64, lines: u64, entries: u64) -> Self {
        Self {
            start,
            end: start,
            lines_before: lines,
            entries_before: entries,
            lines: 0,
            entries: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    pub fn total_lines(&self) -> u64 {
        self.lines_before + self.lines
    }

    pub fn total_entries(&self) -> u64 {
        self.entries_before + self.entries
    }

    /// Add a line of `len` bytes (newline included) holding the entry for `id`, or no
    /// entry (an empty line).
    pub fn add_line(&mut self, len: u64, id: Option<u64>) {
        self.end += len;
        self.lines += 1;
        if let Some(id) = id {
            self.entries += 1;
            self.min = self.min.min(id);
            self.max = self.max.max(id);
        }
    }

    /// Whether the block has its share of lines or bytes and should be closed.
    pub fn is_full(&self) -> bool {
        self.lines >= BLOCK_ENTRIES || self.end - self.start >= BLOCK_BYTES
    }

    /// The empty block that follows this one.
    pub fn next(&self) -> Self {
        Self::starting_at(self.end, self.total_lines(), self.total_entries())
    }
}

/// Up to `len` bytes of `file` from `start` (fewer where the file is shorter).
pub(super) fn read_range(file: &mut File, start: u64, len: u64) -> io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(start))?;
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut out)?;
    Ok(out)
}

/// The bytes of the log at `log` from the end of `blocks` to `log_len`, and where they
/// start. The last block is read too and must be what the index says (its lines and
/// ids): otherwise the index does not describe this log (something rewrote or
/// replaced it), `blocks` is emptied and the whole log read.
pub(super) fn read_unindexed(
    log: &Path,
    blocks: &mut Vec<Block>,
    log_len: u64,
) -> io::Result<(u64, Vec<u8>)> {
    // By the rule every dump file is read by: the caller checked the log at open, but
    // it is opened again here.
    let (mut file, _) =
        cupmon_files::open_regular(log).map_err(cupmon_files::FileError::into_io)?;
    if let Some(last) = blocks.last().copied() {
        let mut bytes = read_range(&mut file, last.start, log_len - last.start)?;
        let len = usize::try_from(last.end - last.start).unwrap_or(usize::MAX);
        if bytes.len() >= len && parse_block(&bytes[..len], &last).is_some() {
            bytes.drain(..len);
            return Ok((last.end, bytes));
        }
        blocks.clear();
    }
    Ok((0, read_range(&mut file, 0, log_len)?))
}

/// The entries of `block` from its `bytes`, in log order; `None` when they are not
/// what the index says (other byte or line counts, ids outside the block's range), or
/// a line is no entry: then the caller reads the log whole, which skips and counts the
/// bad lines.
pub(super) fn parse_block(bytes: &[u8], block: &Block) -> Option<Vec<(u64, String)>> {
    if bytes.len() as u64 != block.end - block.start
        || bytes.last() != Some(&b'\n')
        || bytes.iter().filter(|&&b| b == b'\n').count() as u64 != block.lines
    {
        return None;
    }
    let mut entries = Vec::new();
    for line in bytes[..bytes.len() - 1].split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let (id, name) = parse_entry(&String::from_utf8_lossy(line)).ok()?;
        if !(block.min..=block.max).contains(&id) {
            return None;
        }
        entries.push((id, name));
    }
    (entries.len() as u64 == block.entries).then_some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(lines: &[(u64, Option<u64>)]) -> Block {
        let mut b = Block::starting_at(0, 0, 0);
        for &(len, id) in lines {
            b.add_line(len, id);
        }
        b
    }

    #[test]
    fn index_lines_round_trip() {
        let first = block(&[(20, Some(7)), (1, None), (22, Some(3))]);
        let mut second = first.next();
        second.add_line(30, Some(9));
        let text = format!("{}{}", first.index_line(), second.index_line());
        assert_eq!(text, "43\t3\t2\t3\t7\n73\t4\t3\t9\t9\n");
        assert_eq!(
            parse_index(text.as_bytes(), 73),
            (vec![first, second], None)
        );
        // A log shorter than the index says (a power loss kept the index, not the log).
        assert_eq!(parse_index(text.as_bytes(), 72), (vec![first], None));
    }

    #[test]
    fn bad_index_lines_are_skipped_and_counted_and_the_next_block_spans_them() {
        let first = block(&[(20, Some(7))]);
        let mut second = first.next();
        second.add_line(10, Some(8));
        let mut third = second.next();
        third.add_line(10, Some(9));
        let (one, three) = (first.index_line(), third.index_line());
        for bad in [
            "10\t1\t1\t7\t7\n",                    // ends before the previous block
            "30\t1\t2\t7\t7\n",                    // no new line
            "30\t2\t2\t7\t\n",                     // a field missing
            "30\t2\t2\t7\t7\t1\n",                 // a field too many
            "30\t2\t2\t9\t8\n",                    // an entry but no id range
            "30\t2\t1\t0\t18446744073709551615\n", // no entry but an id range
        ] {
            let text = format!("{one}{bad}{three}");
            let (blocks, damage) = parse_index(text.as_bytes(), 1000);
            let damage = damage.expect(bad);
            assert_eq!((damage.lines, damage.first_line), (1, 2), "{bad:?}");
            // The third block spans the second's bytes and lines, for any id.
            assert_eq!(blocks.len(), 2, "{bad:?}");
            assert_eq!((blocks[1].start, blocks[1].end), (20, 40));
            assert_eq!((blocks[1].lines, blocks[1].entries), (2, 2));
            assert!(blocks[1].may_name(&[8].into()) && blocks[1].may_name(&[0].into()));
        }
        // A cut last line is no bad line: where the index stops.
        let text = format!("{one}30\t2\t2\t7\t7");
        assert_eq!(parse_index(text.as_bytes(), 1000), (vec![first], None));
    }

    #[test]
    fn a_block_is_read_for_the_ids_its_range_holds() {
        let b = block(&[(20, Some(10)), (20, Some(5))]);
        assert!(b.may_name(&[5].into()));
        assert!(b.may_name(&[7, 100].into()));
        assert!(!b.may_name(&[4, 11].into()));
        assert!(!block(&[(1, None)]).may_name(&[0, u64::MAX].into()));
    }

    #[test]
    fn a_block_closes_at_its_share_of_lines_or_bytes() {
        let mut b = Block::starting_at(0, 0, 0);
        for id in 0..BLOCK_ENTRIES - 1 {
            b.add_line(10, Some(id));
        }
        assert!(!b.is_full());
        b.add_line(10, Some(0));
        assert!(b.is_full());
        assert!(block(&[(BLOCK_BYTES, Some(1))]).is_full());
    }
}
