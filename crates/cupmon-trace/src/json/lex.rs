//! The reader's scanners for strings, numbers and the bare literals (`true`, `NaN`,
//! `-Infinity`, ...): each validates what Python's `json` accepts and stops at the
//! end of the slice with [`ReadError::Incomplete`] so that a streaming caller can
//! read on. Strings are scanned eight bytes at a time.

use super::read::{syntax, ReadError, ReadResult, Reader};
use super::tokens::{RawNum, RawStr};

/// Byte classes for the string scanner: 0 = plain ASCII, 1 = quote,
/// 2 = backslash, 3 = control, 4 = part of a multi-byte UTF-8 sequence.
static STRING_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = 3;
        i += 1;
    }
    while i < 0x100 {
        if i >= 0x80 {
            t[i] = 4;
        }
        i += 1;
    }
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 2;
    t
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The index of the first byte at or after `i` that is not plain string
/// content (quote, backslash, control or non-ASCII), eight bytes at a time.
#[inline]
fn skip_plain_ascii(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // A byte is special when it is '"' or '\\', below 0x20, or has its high bit set.
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
        let special = zero_in(quote)
            | zero_in(backslash)
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS)
            | (x & HIGHS);
        if special != 0 {
            return i + (special.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

impl<'a> Reader<'a> {
    /// A string at the cursor (which must be on its opening quote). Validates
    /// escapes, control characters and UTF-8 (Python decodes the file first).
    #[inline]
    pub fn string(&mut self) -> ReadResult<RawStr<'a>> {
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        let mut non_ascii = false;
        let b = self.b;
        loop {
            i = skip_plain_ascii(b, i);
            let Some(&c) = b.get(i) else {
                return Err(ReadError::Incomplete);
            };
            match STRING_CLASS[c as usize] {
                0 => i += 1,
                1 => {
                    self.pos = i + 1;
                    let raw = &b[start..i];
                    if non_ascii && std::str::from_utf8(raw).is_err() {
                        return syntax(start, "invalid UTF-8 in string");
                    }
                    return Ok(RawStr { raw, escaped });
                }
                4 => {
                    non_ascii = true;
                    i += 1;
                }
                2 => {
                    escaped = true;
                    let Some(&e) = b.get(i + 1) else {
                        return Err(ReadError::Incomplete);
                    };
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            if b.len() < i + 6 {
                                return Err(ReadError::Incomplete);
                            }
                            if !b[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) {
                                return syntax(i, "invalid \\uXXXX escape");
                            }
                            i += 6;
                        }
                        _ => return syntax(i, "invalid \\escape"),
                    }
                }
                _ => return syntax(i, "invalid control character in string"),
            }
        }
    }

    fn digits(&mut self) -> ReadResult<usize> {
        let start = self.pos;
        while let Some(c) = self.b.get(self.pos) {
            if c.is_ascii_digit() {
                self.pos += 1;
            } else {
                return Ok(self.pos - start);
            }
        }
        Err(ReadError::Incomplete)
    }

    /// A number (or NaN / Infinity / -Infinity, which Python accepts).
    #[inline]
    pub fn number(&mut self) -> ReadResult<RawNum<'a>> {
        let start = self.pos;
        if self.b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
            if self.b.get(self.pos) == Some(&b'I') {
                self.literal(b"Infinity")?;
                return Ok(RawNum {
                    text: &self.b[start..self.pos],
                    is_int: false,
                });
            }
        }
        match self.b.get(self.pos) {
            None => return Err(ReadError::Incomplete),
            Some(b'0') => self.pos += 1,
            Some(c) if c.is_ascii_digit() => {
                self.digits()?;
            }
            Some(_) => return syntax(start, "expecting value"),
        }
        let mut is_int = true;
        let Some(&c) = self.b.get(self.pos) else {
            return Err(ReadError::Incomplete);
        };
        // Python stops a number where its grammar ends: "1." and "1e" leave the
        // "." / "e" unconsumed, and the caller then fails on them.
        if c == b'.' && self.b.get(self.pos + 1).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
            self.digits()?;
            is_int = false;
        } else if c == b'.' && self.b.get(self.pos + 1).is_none() {
            return Err(ReadError::Incomplete);
        }
        let Some(&c) = self.b.get(self.pos) else {
            return Err(ReadError::Incomplete);
        };
        if c == b'e' || c == b'E' {
            let mut j = self.pos + 1;
            if matches!(self.b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            match self.b.get(j) {
                None => return Err(ReadError::Incomplete),
                Some(d) if d.is_ascii_digit() => {
                    self.pos = j;
                    self.digits()?;
                    is_int = false;
                }
                Some(_) => {}
            }
        }
        Ok(RawNum {
            text: &self.b[start..self.pos],
            is_int,
        })
    }

    pub(super) fn literal(&mut self, word: &[u8]) -> ReadResult<()> {
        let end = self.pos + word.len();
        let avail = &self.b[self.pos..self.b.len().min(end)];
        if !word.starts_with(avail) {
            return syntax(self.pos, "expecting value");
        }
        if avail.len() < word.len() {
            return Err(ReadError::Incomplete);
        }
        self.pos = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_strings_compare_decoded() {
        let mut r = Reader::new(br#""\u0058" "#);
        let s = r.string().expect("string");
        assert!(s.eq_str("X"));
        let mut r = Reader::new(br#""\ud83d\ude00" "#);
        assert_eq!(r.string().expect("string").decode(), "\u{1F600}");
    }
}
