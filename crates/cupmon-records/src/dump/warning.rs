//! Problems that did not stop reading a dump but leave it incomplete. Each names the
//! file and where the damage is, and says what was kept: the output is incomplete and
//! the user must know how.

use std::fmt;

use super::error::Magic;
use super::segment_damage::{fmt_lost, fmt_short};
pub use super::segment_damage::{IndexSays, SegmentLoss};
use crate::DecodeError;

/// The raw-buffer file ends inside a chunk (a crash or a copy cut it short). Every
/// complete chunk before it was read; this is a warning, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    pub file: String,
    /// Number (position in the file, from 0) of the cut chunk.
    pub chunk: u64,
    /// File offset where the cut chunk's header starts.
    pub byte: u64,
    /// Bytes the chunk needs (header, plus its valid size when the header is complete).
    pub needed: u64,
    /// Bytes the file still has from `byte` on.
    pub available: u64,
}

impl fmt::Display for Truncation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: truncated: chunk {} at byte {} needs {} bytes but only {} remain; \
             kept the {} before it",
            self.file,
            self.chunk,
            self.byte,
            self.needed,
            self.available,
            complete_chunks(self.chunk)
        )
    }
}

/// What was wrong with the chunk header where the reader lost the chunk sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkDamage {
    BadMagic(Magic),
    BadVersion {
        found: u32,
        expected: u32,
    },
    /// The valid size exceeds the meta's activity-buffer size.
    TooLarge {
        size: u64,
        max: u64,
    },
    /// The valid size runs past the end of the file, yet a valid chunk header follows:
    /// the size is corrupt (a cut last chunk is a [`Truncation`] instead).
    PastEnd {
        size: u64,
        available: u64,
    },
}

impl fmt::Display for ChunkDamage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic(m) => write!(f, "bad magic {m}, expected b\"CUPMRBUF\""),
            Self::BadVersion { found, expected } => {
                write!(f, "unsupported chunk version {found}, expected {expected}")
            }
            Self::TooLarge { size, max } => write!(
                f,
                "valid size {size} exceeds the activity buffer size {max} that the meta declares"
            ),
            Self::PastEnd { size, available } => write!(
                f,
                "valid size {size} runs past the end of the file ({available} bytes follow the \
                 header)"
            ),
        }
    }
}

/// Bytes of the raw-buffer file that hold no readable chunk. The chunks before them were
/// kept; reading resumed at the next valid chunk header, or ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedBytes {
    pub file: String,
    /// Chunks read before the damage (the number the next chunk read gets).
    pub chunk: u64,
    /// File offset of the damaged header (the first byte skipped).
    pub from: u64,
    /// File offset just past the last byte skipped.
    pub to: u64,
    pub damage: ChunkDamage,
    /// Every skipped byte is zero: a hole such as a power loss leaves.
    pub all_zero: bool,
    /// Reading resumed at a valid chunk header at `to`; false when no valid header
    /// follows (the file ends at `to`, or a [`ZeroTail`] starts there).
    pub resumed: bool,
}

impl fmt::Display for SkippedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let zero = if self.all_zero { ", all zero" } else { "" };
        write!(
            f,
            "{}: skipped bytes {}..{} ({} bytes{zero}): chunk {} at byte {}: {}; ",
            self.file,
            self.from,
            self.to,
            self.to - self.from,
            self.chunk,
            self.from,
            self.damage
        )?;
        if self.resumed {
            write!(f, "resumed at the valid chunk header at byte {}", self.to)
        } else {
            write!(
                f,
                "no valid chunk header follows; kept the {} before it",
                complete_chunks(self.chunk)
            )
        }
    }
}

/// The raw-buffer file ends in zero bytes: what ext4 and XFS leave after a power loss
/// when a file's new size reached the disk but its data did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZeroTail {
    pub file: String,
    /// Chunks read before the zeros.
    pub chunk: u64,
    /// File offset of the first zero byte of the tail.
    pub from: u64,
    pub bytes: u64,
}

impl fmt::Display for ZeroTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.from == 0 {
            // A segment (one file of many) that holds nothing but zeros.
            return write!(
                f,
                "{}: all {} bytes are zero, as a power loss leaves: nothing in it survived",
                self.file, self.bytes
            );
        }
        write!(
            f,
            "{}: {} zero bytes at the end, as a power loss leaves (from byte {}); kept the {} \
             before them",
            self.file,
            self.bytes,
            self.from,
            complete_chunks(self.chunk)
        )
    }
}

/// "1 complete chunk", "3 complete chunks".
fn complete_chunks(n: u64) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{n} complete chunk{plural}")
}

/// A problem that did not stop the decode but leaves it incomplete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpWarning {
    /// The raw-buffer file ends inside a chunk.
    Truncated(Truncation),
    /// A damaged stretch of the raw-buffer file was skipped.
    Skipped(SkippedBytes),
    /// The raw-buffer file ends in zeros.
    ZeroTail(ZeroTail),
    /// A chunk's records stop making sense at some offset; the rest of that chunk was
    /// skipped (its earlier records were kept) and decoding went on with the next chunk.
    BadRecords {
        file: String,
        chunk: u64,
        /// File offset of the bad record.
        byte: u64,
        error: DecodeError,
        /// Bytes of the chunk left undecoded.
        skipped_bytes: u64,
    },
    /// Records stamped by another clock (a client's timestamp callback) that could not
    /// be converted to Unix ns: kept apart, on their own clock
    /// ([`crate::clock::OFF_CLOCK_RULE`]).
    OffClock { records: u64 },
    /// The last line of a line-per-entry side file (`kernel_names.tsv`,
    /// `user_annotations.jsonl`) is cut or unreadable, as a kill while writing leaves
    /// it: skipped, every line before it kept.
    DamagedLastLine {
        file: String,
        line: usize,
        problem: String,
        /// Entries read from the lines before it.
        kept: usize,
    },
    /// A whole-file side file (the old `user_annotations.json`) ends before its JSON
    /// does: its entries were ignored.
    CutSideFile { file: String, problem: String },
    /// The meta says the session is still open: the process ended without closing its
    /// dump (killed, or it crashed). Records still in CUPTI's buffers were lost, and how
    /// many CUPTI dropped after the last meta update is unknown.
    SessionOpen {
        file: String,
        /// Dropped records the last meta update counted.
        dropped_before: Option<u64>,
    },
    /// The process ended (its session still open) before cupmon wrote its first
    /// buffer: the raw-buffer file is empty or absent, the dump holds no records.
    NothingWritten { file: String, absent: bool },
    /// A segment's frame has a sound chunk header but a payload that does not decode:
    /// that buffer was skipped, reading went on with the next.
    BadFrame {
        file: String,
        byte: u64,
        problem: String,
    },
    /// Older segments were removed to keep the dump within its budget: the dump
    /// starts later than the process did. Not damage: what `--keep`/`--keep-for` asked.
    Retired(super::Retired),
    /// A file of the dump was not read: not a regular file (a FIFO, a device, a link
    /// planted in its place), larger than such a file can be, or unreadable.
    Unreadable {
        file: String,
        problem: String,
        /// What the output lacks for it.
        lost: String,
    },
    /// Lines of a line-per-entry side file (`kernel_names.tsv`,
    /// `user_annotations.jsonl`, `segments/index.jsonl`) before its last that are not
    /// entries: no crash leaves them, yet the other lines are sound. Skipped.
    BadLines {
        file: String,
        /// Bad lines skipped.
        lines: usize,
        /// The first of them (from 1) and what is wrong with it.
        first_line: usize,
        first_problem: String,
        /// Entries read from the other lines.
        kept: usize,
    },
    /// The process's last rewrite of the meta did not reach the disk: the meta read is
    /// the one before it, whose session still reads as open and whose counts stop there.
    MetaNotUpdated {
        file: String,
        /// What was left of the rewrite, and what that says of the cause.
        problem: String,
    },
    /// A segment file that is not read: missing, another dump's, or a copy.
    SegmentLost {
        file: String,
        why: SegmentLoss,
        /// What its own index line said it held (lost with it).
        index: Option<IndexSays>,
    },
    /// A closed segment gave fewer (or more) records than its index line says.
    SegmentShort {
        file: String,
        index: IndexSays,
        /// Records of the frames that could be read.
        read: u64,
    },
    /// A segment's digest disagrees with its index line, its segment or the dump: the
    /// segment's records were read instead (nothing lost).
    DigestNotUsed { file: String, problem: String },
    /// A line of `segments/index.jsonl` that does not parse or fails its checksum:
    /// skipped (a closed segment without its line is read from its records).
    BadIndexLine {
        file: String,
        line: usize,
        problem: String,
    },
    /// A sealed frame whose checksum fails, or that belongs to another dump or
    /// segment: skipped, reading went on with the next.
    FrameRejected {
        file: String,
        byte: u64,
        problem: String,
    },
}

impl fmt::Display for DumpWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated(t) => t.fmt(f),
            Self::Skipped(s) => s.fmt(f),
            Self::ZeroTail(z) => z.fmt(f),
            Self::BadRecords {
                file,
                chunk,
                byte,
                error,
                skipped_bytes,
            } => write!(
                f,
                "{file}: chunk {chunk} at byte {byte}: {error}; skipped the last \
                 {skipped_bytes} bytes of this chunk"
            ),
            Self::OffClock { records } => write!(
                f,
                "{records} records carry timestamps of another clock (a CUPTI client such as \
                 torch.profiler registered its own) and the dump holds too few samples of that \
                 clock to convert them; {}",
                crate::clock::OFF_CLOCK_RULE
            ),
            Self::DamagedLastLine {
                file,
                line,
                problem,
                kept,
            } => {
                let plural = if *kept == 1 { "y" } else { "ies" };
                write!(
                    f,
                    "{file}: line {line} (the last): {problem}; skipped it and kept the {kept} \
                     entr{plural} before it"
                )
            }
            Self::CutSideFile { file, problem } => write!(
                f,
                "{file}: cut short ({problem}), as a kill while it was rewritten leaves it: \
                 its entries were ignored"
            ),
            Self::SessionOpen {
                file,
                dropped_before,
            } => {
                write!(f, "{file}: {SESSION_OPEN}")?;
                match dropped_before {
                    Some(n) => write!(f, " ({n} were dropped before it)"),
                    None => Ok(()),
                }?;
                f.write_str("; records still in CUPTI's buffers at the end were lost")
            }
            Self::BadFrame {
                file,
                byte,
                problem,
            } => write!(
                f,
                "{file}: the frame at byte {byte} does not decode ({problem}); skipped that \
                 activity buffer"
            ),
            Self::Retired(r) => {
                write!(
                    f,
                    "{} older segment{} ({} records, {} bytes",
                    r.segments,
                    if r.segments == 1 { "" } else { "s" },
                    r.records,
                    r.bytes
                )?;
                if let (Some(a), Some(b)) = (r.first_ns, r.last_ns) {
                    write!(f, ", Unix ns {a}..{b}")?;
                }
                f.write_str(") were retired to keep the dump within its budget (--keep/--keep-for)")
            }
            Self::Unreadable {
                file,
                problem,
                lost,
            } => write!(f, "{file}: {problem}: not read; {lost}"),
            Self::BadLines {
                file,
                lines,
                first_line,
                first_problem,
                kept,
            } => {
                let (s, plural) = (
                    if *lines == 1 { "" } else { "s" },
                    if *kept == 1 { "y" } else { "ies" },
                );
                write!(
                    f,
                    "{file}: {lines} bad line{s} skipped (the first, line {first_line}: \
                     {first_problem}); kept the {kept} entr{plural} of the other lines"
                )
            }
            Self::MetaNotUpdated { file, problem } => write!(
                f,
                "{file}: the process's last update of the meta was not written ({problem}); \
                 read the one before it, so the session reads as still open and its counts \
                 stop at that update"
            ),
            Self::SegmentLost { file, why, index } => fmt_lost(f, file, why, index),
            Self::SegmentShort { file, index, read } => fmt_short(f, file, index, *read),
            Self::DigestNotUsed { file, problem } => write!(
                f,
                "{file}: {problem}; not used: the segment's records were read instead"
            ),
            Self::BadIndexLine {
                file,
                line,
                problem,
            } => write!(
                f,
                "{file}: line {line}: {problem}; skipped it (a segment it closed is read from \
                 its records)"
            ),
            Self::FrameRejected {
                file,
                byte,
                problem,
            } => write!(
                f,
                "{file}: the frame at byte {byte} {problem}; skipped that activity buffer"
            ),
            Self::NothingWritten { file, absent } => {
                let state = if *absent { "absent" } else { "empty" };
                write!(
                    f,
                    "{file} is {state}: the process ended before cupmon wrote its first \
                     activity buffer (killed before the first flush?); the dump holds no records"
                )
            }
        }
    }
}

/// Why a dump whose session is still open cannot say how many records were dropped.
pub const SESSION_OPEN: &str = "the process ended without closing its dump (killed?): records \
                                dropped after the last meta update are unknown";
