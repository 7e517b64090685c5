//! Finding the chunk sequence again after a damaged chunk header: scan forward for the
//! `CUPMRBUF` magic with a header that could be the next chunk's, noting where the
//! skipped bytes stop being zero (a zero-filled tail is what a power loss leaves).
//!
//! A candidate header must have the file's version (2, or a frame's), a valid size within the meta's buffer size
//! and within the bytes left in the file, and an index no further past the expected one
//! than the chunks the skipped bytes could have held (each at least a 48-byte header).
//! Eight bytes of magic plus these checks make a false match in activity-record bytes
//! practically impossible.

use std::io;

#[cfg(test)]
use super::chunk::CHUNK_VERSION;
use super::chunk::{ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC};

/// How much the scan reads at a time: memory stays bounded whatever the damage.
const SCAN_BLOCK: usize = 1 << 20;

/// What a header found by the scan must satisfy.
#[derive(Debug, Clone, Copy)]
pub(super) struct Expect {
    /// The chunk version of the file.
    pub version: u32,
    /// File offset of the damaged header, where the skipped bytes start.
    pub from: u64,
    /// Index the chunk at `from` should have had.
    pub next_index: u32,
    pub max_size: Option<u64>,
    pub file_len: Option<u64>,
}

impl Expect {
    /// Could `raw`, found at file offset `at`, be the header of the next surviving chunk?
    fn plausible(&self, raw: &[u8; CHUNK_HEADER_LEN], at: u64) -> bool {
        let (magic, version, header) = ChunkHeader::parse(raw);
        let size = u64::from(header.valid_size);
        let lost_at_most = (at - self.from) / CHUNK_HEADER_LEN as u64;
        magic == CHUNK_MAGIC
            && super::chunk::version_fits(self.version, version)
            && u64::from(header.index.wrapping_sub(self.next_index)) <= lost_at_most
            && self.max_size.is_none_or(|max| size <= max)
            && self
                .file_len
                .is_none_or(|len| at + CHUNK_HEADER_LEN as u64 + size <= len)
    }
}

/// Where the scan ended.
#[derive(Debug)]
pub(super) struct Scan {
    /// File offset of the header found; `None` when the file ended first.
    pub resume_at: Option<u64>,
    /// Bytes the scan read from the header found on: the reader serves them next.
    pub put_back: Vec<u8>,
    /// Where the skipped bytes end: `resume_at`, or the end of the file.
    pub end: u64,
    /// File offset just past the last non-zero skipped byte (`from` when all are zero).
    pub nonzero_end: u64,
}

/// Scan from `expect.from`: `seen` holds the bytes already read from there (the damaged
/// header, and any of its data), `read` reads on. The damaged header itself is not a
/// candidate: the scan starts one byte past it.
pub(super) fn scan(
    mut window: Vec<u8>,
    read: &mut impl FnMut(&mut [u8]) -> io::Result<usize>,
    expect: &Expect,
) -> io::Result<Scan> {
    let mut base = expect.from; // file offset of window[0]
    let mut next = 1; // first position in `window` not yet tried as a header
    let mut nonzero_end = expect.from;
    loop {
        // Positions before `limit` have a whole header's bytes in the window.
        let limit = window.len().saturating_sub(CHUNK_HEADER_LEN - 1);
        while next < limit {
            let Some(k) = window[next..limit]
                .iter()
                .position(|&b| b == CHUNK_MAGIC[0])
            else {
                next = limit;
                break;
            };
            let i = next + k;
            let at = base + i as u64;
            if let Some(raw) = window[i..].first_chunk::<CHUNK_HEADER_LEN>() {
                if expect.plausible(raw, at) {
                    note_nonzero(&window[..i], base, &mut nonzero_end);
                    return Ok(Scan {
                        resume_at: Some(at),
                        put_back: window.split_off(i),
                        end: at,
                        nonzero_end,
                    });
                }
            }
            next = i + 1;
        }
        // Keep the positions not tried yet (under a header's length), read on.
        let keep_from = next.min(window.len());
        note_nonzero(&window[..keep_from], base, &mut nonzero_end);
        window.drain(..keep_from);
        base += keep_from as u64;
        next = 0;
        let old = window.len();
        window.resize(old + SCAN_BLOCK, 0);
        let n = read_full(read, &mut window[old..])?;
        window.truncate(old + n);
        if n == 0 {
            note_nonzero(&window, base, &mut nonzero_end);
            return Ok(Scan {
                resume_at: None,
                put_back: Vec::new(),
                end: base + window.len() as u64,
                nonzero_end,
            });
        }
    }
}

/// Move `nonzero_end` past the last non-zero byte of `bytes` (at file offset `at`).
fn note_nonzero(bytes: &[u8], at: u64, nonzero_end: &mut u64) {
    if let Some(k) = bytes.iter().rposition(|&b| b != 0) {
        *nonzero_end = at + k as u64 + 1;
    }
}

/// Read until `buf` is full or `read` reports the end; returns the bytes read.
pub(super) fn read_full(
    read: &mut impl FnMut(&mut [u8]) -> io::Result<usize>,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::chunk::BufferCompletion;

    fn header(index: u32, valid_size: u32) -> [u8; CHUNK_HEADER_LEN] {
        ChunkHeader {
            index,
            frame: false,
            sealed: false,
            valid_size,
            completion: BufferCompletion::default(),
        }
        .to_bytes()
    }

    fn run(bytes: &[u8], expect: Expect) -> Scan {
        let mut rest = &bytes[1..];
        let mut read = |buf: &mut [u8]| io::Read::read(&mut rest, buf);
        scan(bytes[..1].to_vec(), &mut read, &expect).unwrap()
    }

    fn expect(next_index: u32, file_len: usize) -> Expect {
        Expect {
            version: CHUNK_VERSION,
            from: 0,
            next_index,
            max_size: Some(64),
            file_len: Some(file_len as u64),
        }
    }

    #[test]
    fn finds_the_next_header_and_hands_back_the_bytes_from_it() {
        let mut bytes = vec![7u8; 100];
        bytes.extend_from_slice(&header(1, 8));
        bytes.extend_from_slice(&[1; 8]);
        let s = run(&bytes, expect(0, bytes.len()));
        assert_eq!((s.resume_at, s.end, s.nonzero_end), (Some(100), 100, 100));
        assert_eq!(s.put_back, &bytes[100..]);
    }

    #[test]
    fn rejects_headers_that_cannot_be_the_next_chunk() {
        for (index, size, len_extra) in [(5, 8, 8), (1, 65, 65), (1, 8, 7)] {
            let mut bytes = vec![7u8; 100];
            bytes.extend_from_slice(&header(index, size));
            bytes.resize(bytes.len() + len_extra, 1);
            let s = run(&bytes, expect(0, bytes.len()));
            assert_eq!(s.resume_at, None, "index {index} size {size}");
            assert_eq!(s.end, bytes.len() as u64);
        }
    }

    #[test]
    fn notes_where_a_zero_tail_starts_across_blocks() {
        let mut bytes = vec![9u8; 10];
        bytes.resize(10 + 3 * SCAN_BLOCK, 0);
        let s = run(&bytes, expect(0, bytes.len()));
        assert_eq!((s.resume_at, s.nonzero_end), (None, 10));
        let zeros = vec![0u8; 2 * SCAN_BLOCK + 5];
        let s = run(&zeros, expect(0, zeros.len()));
        assert_eq!((s.end, s.nonzero_end), (zeros.len() as u64, 0));
    }

    #[test]
    fn finds_a_header_that_straddles_two_scan_blocks() {
        let at = SCAN_BLOCK - 10;
        let mut bytes = vec![0u8; at];
        bytes.extend_from_slice(&header(3, 0));
        let s = run(&bytes, expect(0, bytes.len()));
        assert_eq!(s.resume_at, Some(at as u64));
        assert_eq!(s.nonzero_end, 0, "all the skipped bytes are zero");
    }
}
