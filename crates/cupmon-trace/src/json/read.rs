//! A validating JSON reader over a byte slice that accepts exactly what Python's
//! `json.load` accepts (NaN/Infinity literals, big integers, duplicate keys) and
//! lets callers skip what they do not need without building values.
//!
//! The slice may end in the middle of a value: the reader then answers
//! [`ReadError::Incomplete`] so a streaming caller can fetch more bytes and retry.

use super::dict::{dict_set, DictSlots};
use super::value::Value;

/// Python's C scanner gives up around this depth (RecursionError); so do we.
const MAX_DEPTH: u32 = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// The bytes ended before the value did.
    Incomplete,
    /// Not JSON: what was expected and at which byte of the slice. (A static
    /// message keeps results small on the hot path.)
    Syntax { pos: usize, msg: &'static str },
    /// Building the value would take more memory than the reader's budget
    /// (see [`Reader::with_budget`]).
    OverBudget,
}

pub(crate) type ReadResult<T> = Result<T, ReadError>;

#[cold]
fn syntax<T>(pos: usize, msg: &'static str) -> ReadResult<T> {
    Err(ReadError::Syntax { pos, msg })
}

/// A string as it appears between its quotes, validated but not yet unescaped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawStr<'a> {
    pub raw: &'a [u8],
    pub escaped: bool,
}

impl RawStr<'_> {
    /// Whether the decoded string equals `s`.
    pub fn eq_str(&self, s: &str) -> bool {
        if self.escaped {
            self.decode() == s
        } else {
            self.raw == s.as_bytes()
        }
    }

    /// The decoded string. Lone surrogates (which Python keeps) become U+FFFD.
    pub fn decode(&self) -> String {
        if !self.escaped {
            return match std::str::from_utf8(self.raw) {
                Ok(s) => s.to_owned(),
                Err(_) => String::from_utf8_lossy(self.raw).into_owned(),
            };
        }
        let mut out: Vec<u16> = Vec::new();
        let mut text = String::with_capacity(self.raw.len());
        let raw = self.raw;
        let mut i = 0;
        let flush = |out: &mut Vec<u16>, text: &mut String| {
            if !out.is_empty() {
                text.extend(char::decode_utf16(out.drain(..)).map(|c| c.unwrap_or('\u{FFFD}')));
            }
        };
        while i < raw.len() {
            if raw[i] == b'\\' {
                let c = raw[i + 1];
                i += 2;
                let unit = match c {
                    b'u' => {
                        let hex = std::str::from_utf8(&raw[i..i + 4]).unwrap_or("0");
                        i += 4;
                        u16::from_str_radix(hex, 16).unwrap_or(0xFFFD)
                    }
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => 10,
                    b'r' => 13,
                    b't' => 9,
                    other => u16::from(other),
                };
                out.push(unit);
            } else {
                flush(&mut out, &mut text);
                let start = i;
                while i < raw.len() && raw[i] != b'\\' {
                    i += 1;
                }
                text.push_str(&String::from_utf8_lossy(&raw[start..i]));
            }
        }
        flush(&mut out, &mut text);
        text
    }
}

/// A number's text and whether Python would parse it as an `int`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawNum<'a> {
    pub text: &'a [u8],
    pub is_int: bool,
}

impl RawNum<'_> {
    /// The integer value of an integer literal, if it fits in i128.
    #[inline]
    pub fn as_i128(&self) -> Option<i128> {
        if !self.is_int {
            return None;
        }
        let (neg, digits) = match self.text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, self.text),
        };
        let mut v: i128 = 0;
        for &d in digits {
            v = v.checked_mul(10)?.checked_add(i128::from(d - b'0'))?;
        }
        Some(if neg { -v } else { v })
    }

    /// The value as Python's `float()` of the parsed number gives it.
    #[inline]
    pub fn as_f64(&self) -> f64 {
        if let Some(v) = self.as_i128() {
            return v as f64;
        }
        match self.text {
            b"NaN" => f64::NAN,
            b"Infinity" => f64::INFINITY,
            b"-Infinity" => f64::NEG_INFINITY,
            text => fast_float2::parse(text).unwrap_or(f64::NAN),
        }
    }
}

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

/// What one parsed node costs against the budget: the enum itself and, for
/// an object member, its key's `String`.
const NODE_BYTES: usize = size_of::<Value>();
const KEY_BYTES: usize = size_of::<String>();

#[derive(Debug)]
pub(crate) struct Reader<'a> {
    pub b: &'a [u8],
    pub pos: usize,
    depth: u32,
    /// Bytes that [`Reader::value`] may still allocate.
    budget: usize,
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Self::at(b, 0)
    }

    pub fn at(b: &'a [u8], pos: usize) -> Self {
        Self {
            b,
            pos,
            depth: 0,
            budget: usize::MAX,
        }
    }

    /// Limit what [`Reader::value`] allocates to about `bytes`: a short text
    /// (`[0,0,0,...]`) can decode into sixteen times its size, so bounding the
    /// text alone does not bound the memory.
    pub fn with_budget(mut self, bytes: usize) -> Self {
        self.budget = bytes;
        self
    }

    #[inline]
    fn charge(&mut self, bytes: usize) -> ReadResult<()> {
        match self.budget.checked_sub(bytes) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => Err(ReadError::OverBudget),
        }
    }

    #[inline]
    pub fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// The next non-whitespace byte, not consumed.
    #[inline]
    pub fn peek(&mut self) -> ReadResult<u8> {
        self.skip_ws();
        self.b.get(self.pos).copied().ok_or(ReadError::Incomplete)
    }

    /// Consume `byte`; `what` names it in the error ("expecting ':' delimiter").
    #[inline]
    pub fn expect(&mut self, byte: u8, what: &'static str) -> ReadResult<()> {
        if self.peek()? == byte {
            self.pos += 1;
            Ok(())
        } else {
            syntax(self.pos, what)
        }
    }

    /// After a member or element: consume `,` (true: another follows) or `close` (false).
    #[inline]
    pub fn comma_or(&mut self, close: u8) -> ReadResult<bool> {
        match self.peek()? {
            b',' => {
                self.pos += 1;
                Ok(true)
            }
            c if c == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => syntax(
                self.pos,
                if close == b'}' {
                    "expecting ',' delimiter or '}'"
                } else {
                    "expecting ',' delimiter or ']'"
                },
            ),
        }
    }

    /// Just after `{`: consume `}` of an empty object (true) or nothing (false).
    #[inline]
    pub fn empty_close(&mut self, close: u8) -> ReadResult<bool> {
        if self.peek()? == close {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// An object key and its colon.
    #[inline]
    pub fn key(&mut self) -> ReadResult<RawStr<'a>> {
        let k = self.key_name()?;
        self.expect(b':', "expecting ':' delimiter")?;
        Ok(k)
    }

    /// An object key without its colon.
    #[inline]
    pub fn key_name(&mut self) -> ReadResult<RawStr<'a>> {
        if self.peek()? != b'"' {
            return syntax(
                self.pos,
                "expecting property name enclosed in double quotes",
            );
        }
        self.string()
    }

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

    fn literal(&mut self, word: &[u8]) -> ReadResult<()> {
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

    fn enter(&mut self) -> ReadResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return syntax(self.pos, "nesting too deep");
        }
        Ok(())
    }

    /// Validate and skip one value.
    pub fn skip_value(&mut self) -> ReadResult<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => {
                self.pos += 1;
                self.enter()?;
                if !self.empty_close(b'}')? {
                    loop {
                        self.key()?;
                        self.skip_value()?;
                        if !self.comma_or(b'}')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Ok(())
            }
            b'[' => {
                self.pos += 1;
                self.enter()?;
                if !self.empty_close(b']')? {
                    loop {
                        self.skip_value()?;
                        if !self.comma_or(b']')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Ok(())
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'N' => self.literal(b"NaN"),
            b'I' => self.literal(b"Infinity"),
            _ => self.number().map(drop),
        }
    }

    /// Parse one value into a [`Value`] (for the rare places that need one).
    pub fn value(&mut self) -> ReadResult<Value> {
        let first = self.peek()?;
        self.charge(NODE_BYTES)?;
        Ok(match first {
            b'"' => {
                let s = self.string()?;
                self.charge(s.raw.len())?;
                Value::Str(s.decode())
            }
            b'{' => {
                self.pos += 1;
                self.enter()?;
                let mut members: Vec<(String, Value)> = Vec::new();
                let mut slots = DictSlots::default();
                if !self.empty_close(b'}')? {
                    loop {
                        let k = self.key()?;
                        // Twice the key: the member's and, in large objects, the index's.
                        self.charge(2 * (KEY_BYTES + k.raw.len()))?;
                        let k = k.decode();
                        let v = self.value()?;
                        // Python's dict: a repeated key keeps its first place, takes the last value.
                        dict_set(&mut members, &mut slots, k, v);
                        if !self.comma_or(b'}')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Value::Object(members)
            }
            b'[' => {
                self.pos += 1;
                self.enter()?;
                let mut items = Vec::new();
                if !self.empty_close(b']')? {
                    loop {
                        items.push(self.value()?);
                        if !self.comma_or(b']')? {
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Value::Array(items)
            }
            b't' => {
                self.literal(b"true")?;
                Value::Bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                Value::Bool(false)
            }
            b'n' => {
                self.literal(b"null")?;
                Value::Null
            }
            b'N' => {
                self.literal(b"NaN")?;
                Value::Float(f64::NAN)
            }
            b'I' => {
                self.literal(b"Infinity")?;
                Value::Float(f64::INFINITY)
            }
            _ => Value::from_num(self.number()?),
        })
    }
}

/// Parse `text` as one whole JSON document (Python's `json.loads`): `None`
/// where that raises.
pub(crate) fn parse_document(text: &[u8]) -> Option<Value> {
    // A space ends a trailing number, which would otherwise read as incomplete.
    let mut owned = Vec::with_capacity(text.len() + 1);
    owned.extend_from_slice(text);
    owned.push(b' ');
    let mut r = Reader::new(&owned);
    let v = r.value().ok()?;
    r.skip_ws();
    (r.pos == owned.len()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(s: &str) -> ReadResult<usize> {
        let mut r = Reader::new(s.as_bytes());
        r.skip_value()?;
        Ok(r.pos)
    }

    #[test]
    fn accepts_what_python_accepts() {
        for ok in [
            "{}",
            "[]",
            r#"{"a":[1,-2.5e3,true,false,null,NaN,Infinity,-Infinity,"x\u00e9\n"]}"#,
            "123456789012345678901234567890",
            "-0",
        ] {
            assert_eq!(skip(&format!("{ok} ")), Ok(ok.len()), "{ok}");
        }
    }

    #[test]
    fn rejects_what_python_rejects() {
        for bad in [
            "{a:1} ",
            "[1,] ",
            "01 ",
            "\"\t\" ",
            r#""\x" "#,
            "tru ",
            "{\"a\" 1} ",
            "+1 ",
            ".5 ",
        ] {
            assert!(
                matches!(skip(bad), Err(ReadError::Syntax { .. }))
                    || skip(bad) != Ok(bad.len() - 1),
                "{bad}"
            );
        }
    }

    #[test]
    fn whole_documents_parse() {
        assert_eq!(parse_document(b"5"), Some(Value::Int(5)));
        assert_eq!(
            parse_document(b" [1] "),
            Some(Value::Array(vec![Value::Int(1)]))
        );
        assert_eq!(parse_document(b"[1] x"), None);
        assert_eq!(parse_document(b""), None);
    }

    #[test]
    fn incomplete_input_asks_for_more() {
        for part in ["{\"a\":", "[1,2", "\"abc", "tr", "12", "-", "\"\\u00"] {
            assert_eq!(skip(part), Err(ReadError::Incomplete), "{part}");
        }
    }

    #[test]
    fn escaped_strings_compare_decoded() {
        let mut r = Reader::new(br#""\u0058" "#);
        let s = r.string().expect("string");
        assert!(s.eq_str("X"));
        let mut r = Reader::new(br#""\ud83d\ude00" "#);
        assert_eq!(r.string().expect("string").decode(), "\u{1F600}");
    }

    #[test]
    fn duplicate_keys_keep_first_place_and_last_value() {
        let mut r = Reader::new(br#"{"a":1,"b":2,"a":3} "#);
        let v = r.value().expect("value");
        assert_eq!(
            v,
            Value::Object(vec![
                ("a".into(), Value::Int(3)),
                ("b".into(), Value::Int(2))
            ])
        );
    }
}
