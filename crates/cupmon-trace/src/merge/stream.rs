//! A byte window over a reader, for parsing JSON that does not fit in memory:
//! parse at the cursor; when the parser runs out of bytes, read more and retry.
//!
//! The window holds one value (an event, a top-level member) at a time, and
//! never more than the limit the caller sets: a value larger than that is an
//! error naming its offset, not a buffer that grows with the input.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::json::read::{ReadError, ReadResult, Reader};
use crate::output::is_gz;

const READ_CHUNK: usize = 1 << 20;

/// Open an input file, decompressing it on the fly when its name ends in `.gz`.
pub(crate) fn open_input(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    let file = File::open(path)?;
    Ok(if is_gz(path) {
        Box::new(MultiGzDecoder::new(BufReader::with_capacity(
            READ_CHUNK, file,
        )))
    } else {
        Box::new(file)
    })
}

/// Why a streaming parse stopped.
#[derive(Debug)]
pub(crate) enum StreamError {
    Io(io::Error),
    /// Syntax error, at an absolute offset in the stream.
    Syntax {
        offset: u64,
        msg: String,
    },
    /// The stream ended inside a value.
    Truncated {
        offset: u64,
    },
    /// The value starting at `offset` is larger than `limit` bytes, as text or
    /// once parsed.
    TooLarge {
        offset: u64,
        limit: u64,
    },
}

impl StreamError {
    /// Offset and message of a parse failure (`eof` phrases a truncation);
    /// the I/O error where reading failed.
    pub fn located(self, eof: &str) -> Result<(u64, String), io::Error> {
        match self {
            StreamError::Io(err) => Err(err),
            StreamError::Syntax { offset, msg } => Ok((offset, msg)),
            StreamError::Truncated { offset } => Ok((offset, eof.to_owned())),
            StreamError::TooLarge { offset, limit } => Ok((
                offset,
                format!(
                    "the JSON value (event or top-level member) starting here is larger than \
                     the limit of {} per value (as text, or once parsed); raise \
                     max_event_bytes (--max-event-size on the command line) if it is legitimate",
                    format_size(limit)
                ),
            )),
        }
    }
}

/// `1 GiB`, `512 KiB`, `1000 bytes`.
pub(crate) fn format_size(bytes: u64) -> String {
    for (unit, size) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
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
    /// The largest value one step may read, as text and as parsed memory.
    limit: usize,
}

impl<R: Read> StreamBuf<R> {
    pub fn new(src: R, limit: u64) -> Self {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Self {
            src,
            buf: Vec::with_capacity((READ_CHUNK * 2).min(limit.saturating_add(READ_CHUNK))),
            pos: 0,
            base: 0,
            eof: false,
            limit,
        }
    }

    /// Stream offset of the cursor.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Drop consumed bytes and read more. False at end of stream.
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
        // only O(log n) times, but not past the limit (plus a chunk): one byte
        // beyond it is enough to know that the value is too large.
        let grow = READ_CHUNK.max(old).min(
            self.limit
                .saturating_add(1)
                .saturating_sub(old)
                .max(READ_CHUNK),
        );
        self.buf.reserve_exact(grow);
        self.buf.resize(old + grow, 0);
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
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(filled);
                    return Err(StreamError::Io(e));
                }
            }
        }
        self.buf.truncate(filled);
        Ok(filled > old || !self.eof)
    }

    /// Skip whitespace, then run `step` on a reader at the value it reached; on
    /// success advance past what it read and return the value's range. The
    /// closure gets the bytes and the start position; it must be restartable.
    pub fn step<T>(
        &mut self,
        mut step: impl FnMut(&mut Reader<'_>) -> ReadResult<T>,
    ) -> Result<(T, Range<u64>), StreamError> {
        self.skip_ws()?;
        loop {
            let mut r = Reader::at(&self.buf, self.pos).with_budget(self.limit);
            match step(&mut r) {
                Ok(v) => {
                    if r.pos - self.pos > self.limit {
                        return Err(self.too_large());
                    }
                    let start = self.offset();
                    self.pos = r.pos;
                    return Ok((v, start..self.offset()));
                }
                Err(ReadError::Incomplete) => {
                    if self.buf.len() - self.pos > self.limit {
                        return Err(self.too_large());
                    }
                    if !self.fill()? {
                        return Err(StreamError::Truncated {
                            offset: self.base + self.buf.len() as u64,
                        });
                    }
                }
                Err(ReadError::OverBudget) => return Err(self.too_large()),
                Err(ReadError::Syntax { pos, msg }) => {
                    return Err(StreamError::Syntax {
                        offset: self.base + pos as u64,
                        msg: msg.to_owned(),
                    })
                }
            }
        }
    }

    fn too_large(&self) -> StreamError {
        StreamError::TooLarge {
            offset: self.offset(),
            limit: self.limit as u64,
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
    pub fn bytes(&self, range: &Range<u64>) -> &[u8] {
        let start = (range.start - self.base) as usize;
        let end = (range.end - self.base) as usize;
        &self.buf[start..end]
    }

    /// After the document: only whitespace may follow.
    pub fn expect_end(&mut self) -> Result<(), StreamError> {
        self.skip_ws()?;
        if self.pos < self.buf.len() {
            return Err(StreamError::Syntax {
                offset: self.offset(),
                msg: "extra data after the JSON document".to_owned(),
            });
        }
        Ok(())
    }
}

/// "line L column C (byte B)" of an offset in the stream `src` (opened again
/// for this), or "byte B" where it cannot be read.
pub(crate) fn locate(src: io::Result<impl Read>, offset: u64) -> String {
    let Ok(mut src) = src else {
        return format!("byte {offset}");
    };
    let (mut line, mut col, mut seen) = (1u64, 1u64, 0u64);
    let mut buf = vec![0u8; 1 << 16];
    while seen < offset {
        let Ok(n) = src.read(&mut buf) else { break };
        if n == 0 {
            break;
        }
        let part = &buf[..n.min((offset - seen) as usize)];
        match memchr::memrchr(b'\n', part) {
            Some(last) => {
                line += memchr::memchr_iter(b'\n', part).count() as u64;
                col = (part.len() - last) as u64;
            }
            None => col += part.len() as u64,
        }
        seen += n as u64;
    }
    format!("line {line} column {col} (byte {offset})")
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

    pub fn copy(&mut self, range: Range<u64>, out: &mut impl io::Write) -> io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_value_stops_at_the_limit_with_the_buffer_bounded() {
        let limit = 3 * READ_CHUNK as u64 + 17;
        let endless = io::Cursor::new(b"  \"".to_vec()).chain(io::repeat(b'A'));
        let mut s = StreamBuf::new(endless, limit);
        match s.step(|r| r.skip_value()) {
            Err(StreamError::TooLarge {
                offset: 2,
                limit: l,
            }) => assert_eq!(l, limit),
            other => panic!("expected TooLarge at byte 2, got {other:?}"),
        }
        assert!(s.buf.capacity() as u64 <= limit + 2 * READ_CHUNK as u64);
    }

    #[test]
    fn values_under_the_limit_stream_past_it_in_total() {
        let item = format!("\"{}\",", "x".repeat(1000));
        let text = format!("[{}0]", item.repeat(5000));
        let mut s = StreamBuf::new(text.as_bytes(), 2000);
        s.step(|r| r.expect(b'[', "'['")).expect("open");
        let mut n = 0;
        loop {
            let (more, _) = s
                .step(|r| {
                    r.skip_value()?;
                    r.comma_or(b']')
                })
                .expect("element");
            n += 1;
            if !more {
                break;
            }
        }
        assert_eq!(n, 5001);
        assert!(s.buf.capacity() <= 2000 + 2 * READ_CHUNK);
    }

    #[test]
    fn sizes_are_shown_in_their_largest_exact_unit() {
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size(64 << 10), "64 KiB");
        assert_eq!(format_size(1000), "1000 bytes");
        assert_eq!(format_size((1 << 20) + 1), "1048577 bytes");
    }
}
