//! A validating JSON reader over a byte slice that accepts exactly what Python's
//! `json.load` accepts (NaN/Infinity literals, big integers, duplicate keys) and
//! lets callers skip what they do not need without building values.
//!
//! The slice may end in the middle of a value: the reader then answers
//! [`ReadError::Incomplete`] so a streaming caller can fetch more bytes and retry.
//! Here: the structure (objects, arrays, skipping, building values); the scanners of
//! strings, numbers and literals are in `lex.rs`, the tokens they give in `tokens.rs`.

use super::dict::{dict_set, DictSlots};
pub(crate) use super::tokens::{RawNum, RawStr};
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
pub(super) fn syntax<T>(pos: usize, msg: &'static str) -> ReadResult<T> {
    Err(ReadError::Syntax { pos, msg })
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
