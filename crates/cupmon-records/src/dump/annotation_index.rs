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
//! is a hint: readers keep its lines up to the first that is cut, unreadable, or not
//! consistent with the log, and read everything after what it covers from the log
//! itself. A dump without it (older cupmon) is read whole, as before.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::annotation_log::parse_entry;
use super::error::DumpError;
use super::USER_ANNOTATIONS_LOG_FILE;

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

/// The blocks of an index file's `bytes` that describe the first `log_len` bytes of
/// the log: its lines up to the first that is cut, unreadable, out of sequence, or
/// past the log's end.
pub(super) fn parse_index(bytes: &[u8], log_len: u64) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut rest = bytes;
    while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
        let line = &rest[..newline];
        rest = &rest[newline + 1..];
        let Some(block) = parse_index_line(line, blocks.last()) else {
            break;
        };
        if block.end > log_len {
            break;
        }
        blocks.push(block);
    }
    blocks
}

fn parse_index_line(line: &[u8], previous: Option<&Block>) -> Option<Block> {
    let text = std::str::from_utf8(line).ok()?;
    let mut fields = text.split('\t').map(|f| f.parse::<u64>().ok());
    let mut next = || fields.next().flatten();
    let (end, lines, entries, min, max) = (next()?, next()?, next()?, next()?, next()?);
    if fields.next().is_some() {
        return None;
    }
    let zero = Block::starting_at(0, 0, 0);
    let before = previous.map_or(zero, |p| {
        Block::starting_at(p.end, p.total_lines(), p.total_entries())
    });
    let block = Block {
        end,
        lines: lines.checked_sub(before.lines_before)?,
        entries: entries.checked_sub(before.entries_before)?,
        min,
        max,
        ..before
    };
    // Every block ends with a newline, so it has a line per newline and at least one.
    let sound = block.end > block.start
        && block.lines >= 1
        && block.lines <= block.end - block.start
        && block.entries <= block.lines
        && (block.entries == 0) == (min > max);
    sound.then_some(block)
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
    let mut file = File::open(log)?;
    if let Some(last) = blocks.last().copied() {
        let mut bytes = read_range(&mut file, last.start, log_len - last.start)?;
        let len = usize::try_from(last.end - last.start).unwrap_or(usize::MAX);
        if bytes.len() >= len && matches!(parse_block(&bytes[..len], &last), Ok(Some(_))) {
            bytes.drain(..len);
            return Ok((last.end, bytes));
        }
        blocks.clear();
    }
    Ok((0, read_range(&mut file, 0, log_len)?))
}

/// The entries of `block` from its `bytes`, in log order; `None` when they are not
/// what the index says (other byte or line counts, ids outside the block's range). A
/// line that is no entry is an error naming its line: inside the log, no crash's doing.
pub(super) fn parse_block(
    bytes: &[u8],
    block: &Block,
) -> Result<Option<Vec<(u64, String)>>, DumpError> {
    if bytes.len() as u64 != block.end - block.start
        || bytes.last() != Some(&b'\n')
        || bytes.iter().filter(|&&b| b == b'\n').count() as u64 != block.lines
    {
        return Ok(None);
    }
    let mut entries = Vec::new();
    for (i, line) in bytes[..bytes.len() - 1].split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let (id, name) = parse_entry(&String::from_utf8_lossy(line)).map_err(|problem| {
            DumpError::BadSideFile {
                file: USER_ANNOTATIONS_LOG_FILE.to_owned(),
                line: usize::try_from(block.lines_before).unwrap_or(usize::MAX) + i + 1,
                problem,
            }
        })?;
        if !(block.min..=block.max).contains(&id) {
            return Ok(None);
        }
        entries.push((id, name));
    }
    Ok((entries.len() as u64 == block.entries).then_some(entries))
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
        assert_eq!(parse_index(text.as_bytes(), 73), [first, second]);
        // A log shorter than the index says (a power loss kept the index, not the log).
        assert_eq!(parse_index(text.as_bytes(), 72), [first]);
    }

    #[test]
    fn the_index_is_kept_up_to_its_first_bad_line() {
        let first = block(&[(20, Some(7))]).index_line();
        for bad in [
            "10\t1\t1\t7\t7\n",                    // ends before the previous block
            "30\t1\t2\t7\t7\n",                    // no new line
            "30\t2\t2\t7\t\n",                     // a field missing
            "30\t2\t2\t7\t7\t1\n",                 // a field too many
            "30\t2\t2\t9\t8\n",                    // an entry but no id range
            "30\t2\t1\t0\t18446744073709551615\n", // no entry but an id range
            "30\t2\t2\t7\t7",                      // cut: no newline
        ] {
            let text = format!("{first}{bad}{first}");
            assert_eq!(parse_index(text.as_bytes(), 1000).len(), 1, "{bad:?}");
        }
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
