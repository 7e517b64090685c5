//! Streaming reader of `cupti_monitor_raw_buffers.bin`. It never loads the whole file,
//! reuses one buffer for every chunk, and never allocates by a size read from the file
//! before checking it against the bytes actually there.
//!
//! Damage rules (each kept chunk is whole; every step over damage is a warning):
//! - A file that ends inside a chunk (in its header or its data) is a *truncated last
//!   chunk*: the reader ends and [`ChunkReader::truncation`] says where.
//! - A header with a bad magic or version, or a valid size larger than the meta's buffer
//!   size (or past the end, when a valid header follows), loses the chunk sequence: the
//!   reader scans forward for the next valid chunk header (`chunk_resync.rs`) and goes
//!   on from there, reporting the skipped byte range; when none follows, the rest of
//!   the file is skipped, and a zero-filled tail (what a power loss leaves) is reported
//!   as such.
//! - Errors: an empty file, an all-zero file, and a file whose first header is damaged
//!   with no valid header anywhere after it (not a raw-buffer file at all). A segment
//!   ([`ChunkReader::with_frames`]) is one file of many: there these are warnings.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use super::chunk::{Chunk, ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC};
use super::chunk_resync::{read_full, scan, Expect, Scan};
use super::error::{DumpError, Magic};
use super::meta::file_label;
use super::warning::{ChunkDamage, DumpWarning, SkippedBytes, Truncation, ZeroTail};
use super::RAW_BUFFERS_FILE;

/// A run of zeros at the end of skipped bytes is called a zero tail from this length
/// on (a disk sector): shorter runs are as likely to be part of the garbage.
const MIN_ZERO_TAIL: u64 = 512;

/// Reads chunks one at a time; see the module docs for how damage is reported.
#[derive(Debug)]
pub struct ChunkReader<R> {
    reader: R,
    /// Bytes read from `reader` past `pos` by a scan for a chunk header: served first.
    ahead: Vec<u8>,
    ahead_at: usize,
    file: String,
    file_len: Option<u64>,
    max_chunk_size: Option<u64>,
    /// The chunk version the file holds: 2 (raw buffers) or 3 (a segment's frames).
    version: u32,
    /// Header index the next chunk should carry (what a scan after damage expects).
    next_index: u32,
    pos: u64,
    number: u64,
    buf: Vec<u8>,
    truncation: Option<Truncation>,
    warnings: Vec<DumpWarning>,
    done: bool,
    /// Damage at byte 0 is a warning, not an error (a segment).
    start_may_be_damaged: bool,
}

/// What one attempt at the next chunk came to.
enum Step {
    /// A whole chunk, its data in `buf`.
    Chunk {
        header: ChunkHeader,
        start: u64,
    },
    /// Damage skipped; a valid header comes next.
    Resumed,
    End,
}

impl ChunkReader<BufReader<File>> {
    /// Open the raw-buffer file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, DumpError> {
        let path = path.as_ref();
        let name = file_label(path, RAW_BUFFERS_FILE);
        // By the rule every dump file is read by: a FIFO or a device is refused.
        let (file, len) = cupmon_files::open_regular(path)
            .map_err(|e| super::dump_file::refused_error(&name, e))?;
        Ok(Self::new(
            BufReader::with_capacity(super::buffers::read_buffer_size(true), file),
            name,
            Some(len),
        ))
    }
}

impl<R: Read> ChunkReader<R> {
    /// Read chunks from `reader`; `file` names it in messages; `file_len`, when known,
    /// lets the reader reject a size past the end before reading anything.
    pub fn new(reader: R, file: impl Into<String>, file_len: Option<u64>) -> Self {
        Self {
            reader,
            ahead: Vec::new(),
            ahead_at: 0,
            file: file.into(),
            file_len,
            max_chunk_size: None,
            version: super::chunk::CHUNK_VERSION,
            next_index: 0,
            pos: 0,
            number: 0,
            buf: Vec::new(),
            truncation: None,
            warnings: Vec::new(),
            done: false,
            start_may_be_damaged: false,
        }
    }

    /// Treat a valid size above `max` (the meta's `buffer_size`) as a corrupt header
    /// rather than a truncated last chunk.
    pub fn with_max_chunk_size(mut self, max: Option<u64>) -> Self {
        self.max_chunk_size = max;
        self
    }

    /// Read a segment: chunks of version 3 or 4 (frames) instead of 2. A segment is
    /// one file of many: one that is empty or damaged from its first byte on (all
    /// zeros, as a power loss leaves) is no error but a warning (or nothing, empty),
    /// so that the segments after it are read.
    pub fn with_frames(mut self) -> Self {
        self.version = super::chunk::CHUNK_VERSION_FRAME;
        self.start_may_be_damaged = true;
        self
    }

    /// The header index of the file's first chunk: 0 (the default) unless the file
    /// continues another file's numbering. Only the scan after damage uses it.
    pub fn with_first_index(mut self, index: u32) -> Self {
        self.next_index = index;
        self
    }

    /// Where the file was cut, once the reader has reached it.
    pub fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    /// Damage stepped over so far, in file order: skipped byte ranges, a zero tail, the
    /// truncation.
    pub fn warnings(&self) -> &[DumpWarning] {
        &self.warnings
    }

    /// Chunks returned so far.
    pub fn chunks_read(&self) -> u64 {
        self.number
    }

    /// The data of the chunk [`Self::next_chunk`] returned last (empty before the first).
    pub fn last_data(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes consumed so far (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.pos
    }

    /// Length of the file, when known.
    pub fn file_len(&self) -> Option<u64> {
        self.file_len
    }

    pub fn file_name(&self) -> &str {
        &self.file
    }

    /// The next complete chunk, `None` at the end (or at a truncated last chunk).
    pub fn next_chunk(&mut self) -> Result<Option<Chunk<'_>>, DumpError> {
        loop {
            if self.done {
                return Ok(None);
            }
            match self.step()? {
                Step::Resumed => {}
                Step::End => return Ok(None),
                Step::Chunk { header, start } => {
                    let number = self.number - 1;
                    return Ok(Some(Chunk {
                        header,
                        number,
                        file_offset: start,
                        data: &self.buf,
                    }));
                }
            }
        }
    }

    fn step(&mut self) -> Result<Step, DumpError> {
        let start = self.pos;
        let mut raw = [0u8; CHUNK_HEADER_LEN];
        let got = self.read_exact_or_end(&mut raw)?;
        if got == 0 {
            self.done = true;
            if start == 0 && !self.start_may_be_damaged {
                return Err(DumpError::EmptyFile {
                    file: self.file.clone(),
                });
            }
            return Ok(Step::End);
        }
        let seen = got.min(8);
        if raw[..seen] != CHUNK_MAGIC[..seen] {
            let mut found = [0u8; 8];
            found[..seen].copy_from_slice(&raw[..seen]);
            let fatal = DumpError::BadChunkMagic {
                file: self.file.clone(),
                chunk: self.number,
                byte: start,
                found: Magic(found),
            };
            let damage = ChunkDamage::BadMagic(Magic(found));
            return self.recover(start, raw[..got].to_vec(), damage, fatal);
        }
        if got < CHUNK_HEADER_LEN {
            return Ok(self.truncate(start, CHUNK_HEADER_LEN as u64, got as u64));
        }
        let (_, version, header) = ChunkHeader::parse(&raw);
        if !super::chunk::version_fits(self.version, version) {
            let fatal = DumpError::BadChunkVersion {
                file: self.file.clone(),
                chunk: self.number,
                byte: start,
                version,
                expected: self.version,
            };
            let damage = ChunkDamage::BadVersion {
                found: version,
                expected: self.version,
            };
            return self.recover(start, raw.to_vec(), damage, fatal);
        }
        let size = u64::from(header.valid_size);
        if let Some(max) = self.max_chunk_size.filter(|&max| size > max) {
            let fatal = DumpError::ChunkTooLarge {
                file: self.file.clone(),
                chunk: self.number,
                byte: start,
                size,
                max,
            };
            let damage = ChunkDamage::TooLarge { size, max };
            return self.recover(start, raw.to_vec(), damage, fatal);
        }
        let needed = CHUNK_HEADER_LEN as u64 + size;
        if let Some(len) = self.file_len {
            let available = len.saturating_sub(start);
            if needed > available {
                return self.recover_or_truncate(start, raw.to_vec(), size, available);
            }
        }
        let read = self.read_data(size)?;
        if read < size {
            // Only when the length is unknown: the file ended inside the data.
            let mut seen = raw.to_vec();
            seen.extend_from_slice(&self.buf);
            let available = CHUNK_HEADER_LEN as u64 + read;
            return self.recover_or_truncate(start, seen, size, available);
        }
        self.pos = start + needed;
        self.next_index = header.index.wrapping_add(1);
        self.number += 1;
        Ok(Step::Chunk { header, start })
    }

    /// A header at `start` whose size runs past the end: a cut last chunk, unless a
    /// valid header follows (then the size is corrupt and the bytes are skipped).
    fn recover_or_truncate(
        &mut self,
        start: u64,
        seen: Vec<u8>,
        size: u64,
        available: u64,
    ) -> Result<Step, DumpError> {
        let found = self.scan_from(start, seen)?;
        if found.resume_at.is_some() {
            let damage = ChunkDamage::PastEnd { size, available };
            return Ok(self.resume(start, damage, &found));
        }
        Ok(self.truncate(start, CHUNK_HEADER_LEN as u64 + size, available))
    }

    /// Damage at `start`: go on at the next valid header, or end with the warnings that
    /// say what the rest of the file held. `fatal` is the error when the damage is at
    /// byte 0 and no valid header follows: no chunk header anywhere, so not a raw-buffer
    /// file (or nothing of one reached the disk).
    fn recover(
        &mut self,
        start: u64,
        seen: Vec<u8>,
        damage: ChunkDamage,
        fatal: DumpError,
    ) -> Result<Step, DumpError> {
        let found = self.scan_from(start, seen)?;
        if found.resume_at.is_some() {
            return Ok(self.resume(start, damage, &found));
        }
        self.done = true;
        let all_zero = found.nonzero_end == start;
        if start == 0 && !self.start_may_be_damaged {
            return Err(if all_zero {
                DumpError::AllZero {
                    file: self.file.clone(),
                    bytes: found.end,
                }
            } else {
                fatal
            });
        }
        let file = self.file.clone();
        let chunk = self.number;
        let zeros = found.end - found.nonzero_end;
        let garbage_end = if all_zero || zeros >= MIN_ZERO_TAIL {
            found.nonzero_end
        } else {
            found.end
        };
        if garbage_end > start {
            self.warnings.push(DumpWarning::Skipped(SkippedBytes {
                file: file.clone(),
                chunk,
                from: start,
                to: garbage_end,
                damage,
                all_zero: false,
                resumed: false,
            }));
        }
        if found.end > garbage_end {
            self.warnings.push(DumpWarning::ZeroTail(ZeroTail {
                file,
                chunk,
                from: garbage_end,
                bytes: found.end - garbage_end,
            }));
        }
        self.pos = found.end;
        Ok(Step::End)
    }

    fn resume(&mut self, start: u64, damage: ChunkDamage, found: &Scan) -> Step {
        self.warnings.push(DumpWarning::Skipped(SkippedBytes {
            file: self.file.clone(),
            chunk: self.number,
            from: start,
            to: found.end,
            damage,
            all_zero: found.nonzero_end == start,
            resumed: true,
        }));
        self.pos = found.end;
        Step::Resumed
    }

    /// Scan for the next valid header from `start`, `seen` being the bytes read from
    /// there already; bytes read past a header found are served next.
    fn scan_from(&mut self, start: u64, seen: Vec<u8>) -> Result<Scan, DumpError> {
        let expect = Expect {
            version: self.version,
            from: start,
            next_index: self.next_index,
            max_size: self.max_chunk_size,
            file_len: self.file_len,
        };
        let mut found =
            scan(seen, &mut |buf| self.read_some(buf), &expect).map_err(|e| self.io_error(e))?;
        let mut ahead = std::mem::take(&mut found.put_back);
        ahead.extend_from_slice(&self.ahead[self.ahead_at..]);
        self.ahead = ahead;
        self.ahead_at = 0;
        Ok(found)
    }

    fn truncate(&mut self, byte: u64, needed: u64, available: u64) -> Step {
        self.done = true;
        let t = Truncation {
            file: self.file.clone(),
            chunk: self.number,
            byte,
            needed,
            available,
        };
        self.warnings.push(DumpWarning::Truncated(t.clone()));
        self.truncation = Some(t);
        Step::End
    }

    /// Read into `buf` from the bytes ahead, then from the reader.
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let ahead = &self.ahead[self.ahead_at..];
        if ahead.is_empty() {
            return self.reader.read(buf);
        }
        let n = buf.len().min(ahead.len());
        buf[..n].copy_from_slice(&ahead[..n]);
        self.ahead_at += n;
        if self.ahead_at == self.ahead.len() {
            self.ahead.clear();
            self.ahead_at = 0;
        }
        Ok(n)
    }

    fn read_exact_or_end(&mut self, buf: &mut [u8]) -> Result<usize, DumpError> {
        read_full(&mut |b| self.read_some(b), buf).map_err(|e| self.io_error(e))
    }

    /// Read up to `size` data bytes into `buf`; fewer only at the end of the input.
    fn read_data(&mut self, size: u64) -> Result<u64, DumpError> {
        self.buf.clear();
        let ahead = &self.ahead[self.ahead_at..];
        let from_ahead = ahead.len().min(usize::try_from(size).unwrap_or(usize::MAX));
        self.buf.extend_from_slice(&ahead[..from_ahead]);
        self.ahead_at += from_ahead;
        let rest = size - from_ahead as u64;
        if rest > 0 {
            // The size is either known to be in the file, or (length unknown) read through
            // `take`, which grows the buffer only as bytes arrive.
            if self.file_len.is_some() {
                self.buf.reserve(rest as usize);
            }
            (&mut self.reader)
                .take(rest)
                .read_to_end(&mut self.buf)
                .map_err(|e| self.io_error(e))?;
        }
        Ok(self.buf.len() as u64)
    }

    fn io_error(&mut self, e: io::Error) -> DumpError {
        self.done = true;
        DumpError::io(&self.file, e)
    }
}
