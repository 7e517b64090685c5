//! Appends chunks to `cupti_monitor_raw_buffers.bin`: what the live monitor's worker
//! thread does with each completed buffer (cheap: a header and a copy, no decoding).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::chunk::{BufferCompletion, ChunkHeader};

/// Writes chunks (header + buffer bytes) and numbers them from 0 (or a given start).
/// Call [`ChunkWriter::finish`] to see write errors: dropping only flushes best-effort.
#[derive(Debug)]
pub struct ChunkWriter<W: Write> {
    out: W,
    next_index: u32,
    bytes_written: u64,
}

impl ChunkWriter<BufWriter<File>> {
    /// Create (truncate) the raw-buffer file at `path`.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(BufWriter::with_capacity(
            1 << 20,
            File::create(path)?,
        )))
    }

    /// Append to an existing file, numbering new chunks from `next_index`.
    pub fn append(path: impl AsRef<Path>, next_index: u32) -> io::Result<Self> {
        let file = OpenOptions::new().append(true).create(true).open(path)?;
        let mut w = Self::new(BufWriter::with_capacity(1 << 20, file));
        w.next_index = next_index;
        Ok(w)
    }
}

impl<W: Write> ChunkWriter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            next_index: 0,
            bytes_written: 0,
        }
    }

    /// Write one chunk: a header numbering it, then `data` (the buffer's valid bytes).
    pub fn write_chunk(
        &mut self,
        completion: BufferCompletion,
        data: &[u8],
    ) -> io::Result<ChunkHeader> {
        self.write(completion, data, false)
    }

    /// Write one version-3 chunk: `frame` is a time index and a compact buffer.
    pub fn write_frame(
        &mut self,
        completion: BufferCompletion,
        frame: &[u8],
    ) -> io::Result<ChunkHeader> {
        self.write(completion, frame, true)
    }

    /// Write one version-4 chunk: `frame` is a time index, a seal and a compact buffer.
    pub fn write_sealed_frame(
        &mut self,
        completion: BufferCompletion,
        frame: &[u8],
    ) -> io::Result<ChunkHeader> {
        self.write_versioned(completion, frame, true, true)
    }

    fn write(
        &mut self,
        completion: BufferCompletion,
        data: &[u8],
        frame: bool,
    ) -> io::Result<ChunkHeader> {
        self.write_versioned(completion, data, frame, false)
    }

    fn write_versioned(
        &mut self,
        completion: BufferCompletion,
        data: &[u8],
        frame: bool,
        sealed: bool,
    ) -> io::Result<ChunkHeader> {
        let valid_size = u32::try_from(data.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "activity buffer of {} bytes exceeds a chunk's u32 size",
                    data.len()
                ),
            )
        })?;
        let header = ChunkHeader {
            index: self.next_index,
            frame,
            sealed,
            valid_size,
            completion,
        };
        self.out.write_all(&header.to_bytes())?;
        self.out.write_all(data)?;
        self.next_index = self.next_index.wrapping_add(1);
        self.bytes_written += (header.to_bytes().len() + data.len()) as u64;
        Ok(header)
    }

    /// Index the next chunk will get.
    pub fn next_index(&self) -> u32 {
        self.next_index
    }

    /// Bytes written by this writer so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flush and hand back the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
