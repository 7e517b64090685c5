//! A byte window over a reader, for parsing JSON that does not fit in memory:
//! parse at the cursor; when the parser runs out of bytes, read more and retry.

use std::io::Read;

use crate::json::read::{ReadError, ReadResult, Reader};

const READ_CHUNK: usize = 1 << 20;

/// Why a streaming parse stopped.
#[derive(Debug)]
pub(crate) enum StreamError {
    Io(std::io::Error),
    /// Syntax error or premature end, at an absolute offset in the stream.
    Syntax {
        offset: u64,
        msg: String,
    },
}

#[derive(Debug)]
pub(crate) struct StreamBuf<R> {
    src: R,
    buf: Vec<u8>,
    /// Bytes of `buf` before this are consumed.
    pos: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    eof: bool,
}

impl<R: Read> StreamBuf<R> {
    pub fn new(src: R) -> Self {
        Self {
            src,
            buf: Vec::with_capacity(READ_CHUNK * 2),
            pos: 0,
            base: 0,
            eof: false,
        }
    }

    /// Stream offset of the cursor.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Drop consumed bytes and read another chunk. False at end of stream.
    fn fill(&mut self) -> Result<bool, StreamError> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        let old = self.buf.len();
        // Grow geometrically so that a value larger than a chunk is re-parsed
        // only O(log n) times.
        self.buf.resize(old + READ_CHUNK.max(old), 0);
        let mut filled = old;
        // Read until the chunk is full or the stream ends, so a short read
        // (gzip members, pipes) does not cost a retry of the whole value.
        while filled < self.buf.len() {
            match self.src.read(&mut self.buf[filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(filled);
                    return Err(StreamError::Io(e));
                }
            }
        }
        self.buf.truncate(filled);
        Ok(filled > old || !self.eof)
    }

    /// Run `step` on a reader at the cursor; on success advance past what it read.
    /// The closure gets the bytes and the start position; it must be restartable.
    pub fn step<T>(
        &mut self,
        mut step: impl FnMut(&mut Reader<'_>) -> ReadResult<T>,
    ) -> Result<(T, std::ops::Range<u64>), StreamError> {
        loop {
            let mut r = Reader::at(&self.buf, self.pos);
            match step(&mut r) {
                Ok(v) => {
                    let start = self.offset();
                    self.pos = r.pos;
                    return Ok((v, start..self.offset()));
                }
                Err(ReadError::Incomplete) => {
                    if !self.fill()? {
                        return Err(StreamError::Syntax {
                            offset: self.base + self.buf.len() as u64,
                            msg: "unexpected end of file (is the file truncated?)".to_owned(),
                        });
                    }
                }
                Err(ReadError::Syntax { pos, msg }) => {
                    return Err(StreamError::Syntax {
                        offset: self.base + pos as u64,
                        msg: msg.to_owned(),
                    })
                }
            }
        }
    }

    /// Consume whitespace, so that the next step's range starts at a value.
    pub fn skip_ws(&mut self) -> Result<(), StreamError> {
        loop {
            let mut r = Reader::at(&self.buf, self.pos);
            r.skip_ws();
            self.pos = r.pos;
            if self.pos < self.buf.len() || !self.fill()? {
                return Ok(());
            }
        }
    }

    /// The bytes of `range` (an absolute range just returned by [`Self::step`]).
    pub fn bytes(&self, range: &std::ops::Range<u64>) -> &[u8] {
        let start = (range.start - self.base) as usize;
        let end = (range.end - self.base) as usize;
        &self.buf[start..end]
    }

    /// After the document: only whitespace may follow.
    pub fn expect_end(&mut self) -> Result<(), StreamError> {
        loop {
            let rest = &self.buf[self.pos..];
            if let Some(i) = rest
                .iter()
                .position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
            {
                return Err(StreamError::Syntax {
                    offset: self.offset() + i as u64,
                    msg: "extra data after the JSON document".to_owned(),
                });
            }
            self.pos = self.buf.len();
            if !self.fill()? {
                return Ok(());
            }
        }
    }
}

/// Copy byte ranges of a stream, in increasing order, to a writer.
#[derive(Debug)]
pub(crate) struct RangeCopier<R> {
    src: R,
    offset: u64,
    scratch: Vec<u8>,
}

impl<R: Read> RangeCopier<R> {
    pub fn new(src: R) -> Self {
        Self {
            src,
            offset: 0,
            scratch: vec![0; READ_CHUNK],
        }
    }

    pub fn copy(
        &mut self,
        range: std::ops::Range<u64>,
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        let mut skip = range.start - self.offset;
        while skip > 0 {
            let n = skip.min(self.scratch.len() as u64) as usize;
            self.src.read_exact(&mut self.scratch[..n])?;
            skip -= n as u64;
        }
        let mut left = range.end - range.start;
        while left > 0 {
            let n = left.min(self.scratch.len() as u64) as usize;
            self.src.read_exact(&mut self.scratch[..n])?;
            out.write_all(&self.scratch[..n])?;
            left -= n as u64;
        }
        self.offset = range.end;
        Ok(())
    }
}
