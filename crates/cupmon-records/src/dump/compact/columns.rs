//! Byte-stream split columns and a bounds-checked reader of the section stream.
//!
//! A column of `n` values `width` bytes wide is stored as `width` runs of `n` bytes:
//! all the low bytes, then all the second bytes... The high bytes of small deltas and
//! ids are runs of zeros and every run holds one kind of byte, which is what a
//! general-purpose compressor codes best.

use super::error::CompactError;

/// Append `values` as a `width`-byte split column.
pub(crate) fn put_split(out: &mut Vec<u8>, values: &[u64], width: u8) {
    for b in 0..u32::from(width) {
        out.extend(values.iter().map(|v| (v >> (8 * b)) as u8));
    }
}

/// [`put_split`] for template ids.
pub(crate) fn put_split_u32(out: &mut Vec<u8>, values: &[u32], width: u8) {
    for b in 0..u32::from(width) {
        out.extend(values.iter().map(|v| (v >> (8 * b)) as u8));
    }
}

/// A split column being read back, value by value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SplitColumn<'a> {
    bytes: &'a [u8],
    len: usize,
    width: u8,
}

impl<'a> SplitColumn<'a> {
    /// `bytes` must be exactly `len * width` long (the cursor took that many).
    pub(crate) fn new(bytes: &'a [u8], len: usize, width: u8) -> Self {
        debug_assert_eq!(bytes.len(), len * width as usize);
        Self { bytes, len, width }
    }

    /// Values `start..start + out.len()` into `out`, one byte plane at a time (a
    /// loop the compiler vectorises, rather than `width` scattered loads per value).
    #[inline]
    pub(crate) fn values_at(&self, start: usize, out: &mut [u64]) {
        out.fill(0);
        for b in 0..self.width as usize {
            let plane = &self.bytes[b * self.len + start..][..out.len()];
            let shift = 8 * b as u32;
            for (v, &byte) in out.iter_mut().zip(plane) {
                *v |= u64::from(byte) << shift;
            }
        }
    }
}

/// Reads the section stream front to back; running out is an error naming the section.
#[derive(Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next `n` bytes (`n` computed in u64 so that a corrupt count cannot overflow).
    pub(crate) fn take(&mut self, n: u64, section: &'static str) -> Result<&'a [u8], CompactError> {
        let available = self.remaining();
        match usize::try_from(n) {
            Ok(len) if len <= available => {
                let bytes = &self.buf[self.pos..self.pos + len];
                self.pos += len;
                Ok(bytes)
            }
            _ => Err(CompactError::Truncated {
                section,
                offset: self.pos,
                needed: n,
                available,
            }),
        }
    }

    pub(crate) fn u8(&mut self, section: &'static str) -> Result<u8, CompactError> {
        Ok(self.take(1, section)?[0])
    }

    pub(crate) fn u16(&mut self, section: &'static str) -> Result<u16, CompactError> {
        let b = self.take(2, section)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self, section: &'static str) -> Result<u32, CompactError> {
        let b = self.take(4, section)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}
