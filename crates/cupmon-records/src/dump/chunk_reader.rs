//! Streaming reader of `cupti_monitor_raw_buffers.bin`. It never loads the whole file,
//! reuses one buffer for every chunk, and never allocates by a size read from the file
//! before checking it against the bytes actually there.
//!
//! Damage rules: a file that ends inside a chunk (in its header or its data) is a
//! *truncated last chunk*: every complete chunk before it is returned, then the reader
//! ends and [`ChunkReader::truncation`] says where. A header with a bad magic or version,
//! or a valid size larger than the meta's buffer size, is an error naming the file, the
//! chunk and the byte; so is an empty file.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use super::chunk::{Chunk, ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC, CHUNK_VERSION};
use super::error::{DumpError, Magic, Truncation};
use super::meta::file_label;
use super::RAW_BUFFERS_FILE;

/// Reads chunks one at a time; see the module docs for how damage is reported.
#[derive(Debug)]
pub struct ChunkReader<R> {
    reader: R,
    file: String,
    file_len: Option<u64>,
    max_chunk_size: Option<u64>,
    pos: u64,
    number: u64,
    buf: Vec<u8>,
    truncation: Option<Truncation>,
    done: bool,
}

impl ChunkReader<BufReader<File>> {
    /// Open the raw-buffer file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, DumpError> {
        let path = path.as_ref();
        let name = file_label(path, RAW_BUFFERS_FILE);
        let file = File::open(path).map_err(|e| DumpError::io(&name, e))?;
        let len = file.metadata().map_err(|e| DumpError::io(&name, e))?.len();
        Ok(Self::new(
            BufReader::with_capacity(1 << 20, file),
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
            file: file.into(),
            file_len,
            max_chunk_size: None,
            pos: 0,
            number: 0,
            buf: Vec::new(),
            truncation: None,
            done: false,
        }
    }

    /// Treat a valid size above `max` (the meta's `buffer_size`) as a corrupt header
    /// rather than a truncated last chunk.
    pub fn with_max_chunk_size(mut self, max: Option<u64>) -> Self {
        self.max_chunk_size = max;
        self
    }

    /// Where the file was cut, once the reader has reached it.
    pub fn truncation(&self) -> Option<&Truncation> {
        self.truncation.as_ref()
    }

    /// Chunks returned so far.
    pub fn chunks_read(&self) -> u64 {
        self.number
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
        if self.done {
            return Ok(None);
        }
        let start = self.pos;
        let mut raw = [0u8; CHUNK_HEADER_LEN];
        let got = read_full(&mut self.reader, &mut raw).map_err(|e| self.io_error(e))?;
        if got == 0 {
            self.done = true;
            if start == 0 {
                return Err(DumpError::EmptyFile {
                    file: self.file.clone(),
                });
            }
            return Ok(None);
        }
        let seen = got.min(8);
        if raw[..seen] != CHUNK_MAGIC[..seen] {
            self.done = true;
            let mut found = [0u8; 8];
            found[..seen].copy_from_slice(&raw[..seen]);
            return Err(DumpError::BadChunkMagic {
                file: self.file.clone(),
                chunk: self.number,
                byte: start,
                found: Magic(found),
            });
        }
        if got < CHUNK_HEADER_LEN {
            return Ok(self.truncate(start, CHUNK_HEADER_LEN as u64, got as u64));
        }
        let (_, version, header) = ChunkHeader::parse(&raw);
        if version != CHUNK_VERSION {
            self.done = true;
            return Err(DumpError::BadChunkVersion {
                file: self.file.clone(),
                chunk: self.number,
                byte: start,
                version,
            });
        }
        let size = u64::from(header.valid_size);
        if let Some(max) = self.max_chunk_size.filter(|&max| size > max) {
            self.done = true;
            return Err(DumpError::ChunkTooLarge {
                file: self.file.clone(),
                chunk: self.number,
                byte: start,
                size,
                max,
            });
        }
        let needed = CHUNK_HEADER_LEN as u64 + size;
        if let Some(len) = self.file_len {
            let available = len.saturating_sub(start);
            if needed > available {
                return Ok(self.truncate(start, needed, available));
            }
        }
        // The size is now either known to be in the file, or (length unknown) read through
        // `take`, which grows the buffer only as bytes arrive.
        self.buf.clear();
        if self.file_len.is_some() {
            self.buf.reserve(size as usize);
        }
        let read = (&mut self.reader)
            .take(size)
            .read_to_end(&mut self.buf)
            .map_err(|e| self.io_error(e))?;
        if (read as u64) < size {
            let available = CHUNK_HEADER_LEN as u64 + read as u64;
            return Ok(self.truncate(start, needed, available));
        }
        self.pos = start + needed;
        let number = self.number;
        self.number += 1;
        Ok(Some(Chunk {
            header,
            number,
            file_offset: start,
            data: &self.buf,
        }))
    }

    fn truncate(&mut self, byte: u64, needed: u64, available: u64) -> Option<Chunk<'_>> {
        self.done = true;
        self.truncation = Some(Truncation {
            file: self.file.clone(),
            chunk: self.number,
            byte,
            needed,
            available,
        });
        None
    }

    fn io_error(&mut self, e: io::Error) -> DumpError {
        self.done = true;
        DumpError::io(&self.file, e)
    }
}

/// Read until `buf` is full or the reader ends; returns the bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// The headers of the complete chunks of the raw-buffer file at `path`, read by seeking
/// past each chunk's data (fast on any size of file). Stops quietly at the first damage.
pub fn chunk_headers(path: &Path) -> io::Result<Vec<ChunkHeader>> {
    use std::io::{Seek, SeekFrom};
    let mut file = BufReader::with_capacity(64 << 10, File::open(path)?);
    let len = file.get_ref().metadata()?.len();
    let mut headers = Vec::new();
    let mut pos = 0u64;
    let mut raw = [0u8; CHUNK_HEADER_LEN];
    while pos + CHUNK_HEADER_LEN as u64 <= len {
        if read_full(&mut file, &mut raw)? < CHUNK_HEADER_LEN {
            break;
        }
        let (magic, version, header) = ChunkHeader::parse(&raw);
        if magic != CHUNK_MAGIC || version != CHUNK_VERSION {
            break;
        }
        let end = pos + CHUNK_HEADER_LEN as u64 + u64::from(header.valid_size);
        if end > len {
            break;
        }
        file.seek(SeekFrom::Start(end))?;
        pos = end;
        headers.push(header);
    }
    Ok(headers)
}
