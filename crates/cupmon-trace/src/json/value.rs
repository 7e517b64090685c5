//! A small JSON value for the few places the merge needs one (annotations,
//! odd field types), with the Python conversions PyTorch's merge applies to it:
//! `int(v)`, `float(v)`, `str(v)` and `json.dumps(v)`.

use super::read::RawNum;
use super::write::{push_py_float_repr, push_py_json_float};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i128),
    /// An integer literal beyond i128, kept as its (normalised) digits.
    BigInt(String),
    Float(f64),
    Str(String),
    Array(Vec<Value>),
    /// Members in first-seen order (Python dict semantics).
    Object(Vec<(String, Value)>),
}

/// Why a Python conversion raised instead of returning a value.
pub(crate) type PyRaise = String;

impl Value {
    #[inline]
    pub fn from_num(n: RawNum<'_>) -> Self {
        if !n.is_int {
            return Value::Float(n.as_f64());
        }
        match n.as_i128() {
            Some(v) => Value::Int(v),
            None => {
                // Python keeps any integer; "-0" is just 0, which fits above.
                Value::BigInt(String::from_utf8_lossy(n.text).into_owned())
            }
        }
    }

    /// Python's `int(v)` as PyTorch's merge's `_as_int` uses it: `Ok(None)` where Python
    /// raises TypeError/ValueError (PyTorch's merge then falls back to a default),
    /// `Err` where it raises anything else (OverflowError), which PyTorch's merge does not catch.
    pub fn py_int(&self) -> Result<Option<i128>, PyRaise> {
        match self {
            Value::Int(v) => Ok(Some(*v)),
            Value::BigInt(digits) => Err(format!("integer {digits} is out of range")),
            Value::Bool(b) => Ok(Some(i128::from(*b))),
            Value::Float(f) if f.is_nan() => Ok(None),
            Value::Float(f) if f.is_infinite() => {
                Err("cannot convert float infinity to integer".to_owned())
            }
            Value::Float(f) => float_to_int(*f).map(Some),
            Value::Str(s) => Ok(py_int_from_str(s)),
            Value::Null | Value::Array(_) | Value::Object(_) => Ok(None),
        }
    }

    /// Python's `float(v)`: `None` where Python raises TypeError/ValueError.
    pub fn py_float(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::BigInt(d) => d.parse::<f64>().ok(),
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Value::Float(f) => Some(*f),
            Value::Str(s) => py_float_from_str(s),
            Value::Null | Value::Array(_) | Value::Object(_) => None,
        }
    }

    /// Python's `str(v)` of the decoded value.
    pub fn py_str(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            other => {
                let mut out = String::new();
                other.push_py_repr(&mut out);
                out
            }
        }
    }

    /// Python's `repr(v)` (what `str()` shows for containers).
    fn push_py_repr(&self, out: &mut String) {
        self.push_python(out, Style::Repr);
    }

    /// Python's `json.dumps(v)` with its defaults (`", "`/`": "` separators, ASCII only).
    pub fn py_json_dumps(&self) -> String {
        let mut out = String::new();
        self.push_python(&mut out, Style::Json);
        out
    }

    /// `repr` and `json.dumps` share their container layout (`", "` and
    /// `": "`) and differ in how scalars and strings are spelled.
    fn push_python(&self, out: &mut String, style: Style) {
        let string = |out: &mut String, s: &str| match style {
            Style::Repr => push_py_str_repr(out, s),
            Style::Json => push_ascii_json_str(out, s),
        };
        match self {
            Value::Null => out.push_str(style.pick("None", "null")),
            Value::Bool(true) => out.push_str(style.pick("True", "true")),
            Value::Bool(false) => out.push_str(style.pick("False", "false")),
            Value::Int(v) => out.push_str(&v.to_string()),
            Value::BigInt(d) => out.push_str(d),
            Value::Float(f) => match style {
                Style::Repr => push_py_float_repr(out, *f),
                Style::Json => push_py_json_float(out, *f),
            },
            Value::Str(s) => string(out, s),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.push_python(out, style);
                }
                out.push(']');
            }
            Value::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    string(out, k);
                    out.push_str(": ");
                    v.push_python(out, style);
                }
                out.push('}');
            }
        }
    }
}

/// How [`Value::push_python`] spells values.
#[derive(Debug, Clone, Copy)]
enum Style {
    Repr,
    Json,
}

impl Style {
    fn pick(self, repr: &'static str, json: &'static str) -> &'static str {
        match self {
            Style::Repr => repr,
            Style::Json => json,
        }
    }
}

/// `int(f)` for a finite float: exact truncation toward zero.
fn float_to_int(f: f64) -> Result<i128, PyRaise> {
    let t = f.trunc();
    if t.abs() < 1.7e38 {
        Ok(t as i128)
    } else {
        Err(format!("integer {t} is out of range"))
    }
}

/// Python's `int(str)`: surrounding whitespace, a sign, digits with single
/// underscores between them. `None` where Python raises ValueError.
pub(crate) fn py_int_from_str(s: &str) -> Option<i128> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = strip_digit_underscores(body)?;
    let v: i128 = digits.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Python's `float(str)`. `None` where Python raises ValueError.
pub(crate) fn py_float_from_str(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_whitespace());
    let lower = t.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if unsigned.len() + 1 < lower.len() {
        return None; // more than one sign
    }
    if matches!(unsigned, "inf" | "infinity" | "nan") {
        return t.parse::<f64>().ok();
    }
    // Underscores are allowed only between digits.
    let b = t.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_'
            && !(i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            return None;
        }
    }
    let cleaned: String = t.chars().filter(|&c| c != '_').collect();
    if cleaned.is_empty() || !cleaned.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    if !cleaned
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    cleaned.parse::<f64>().ok()
}

fn strip_digit_underscores(body: &str) -> Option<String> {
    let b = body.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() || !b[b.len() - 1].is_ascii_digit() {
        return None;
    }
    let mut out = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => out.push(c as char),
            b'_' if b[i + 1] != b'_' => {}
            _ => return None,
        }
    }
    Some(out)
}

/// Python's `repr(str)`: single quotes unless the text has one and no double quote.
fn push_py_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_py_printable(c) => {
                let v = c as u32;
                if v < 0x100 {
                    out.push_str(&format!("\\x{v:02x}"));
                } else if v < 0x10000 {
                    out.push_str(&format!("\\u{v:04x}"));
                } else {
                    out.push_str(&format!("\\U{v:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// An approximation of `str.isprintable` for one character: control, format,
/// separator (other than space), private-use and unassigned-looking code points are not.
fn is_py_printable(c: char) -> bool {
    let v = c as u32;
    !(v < 0x20
        || (0x7f..=0xa0).contains(&v)
        || v == 0xad
        || (0x2000..=0x200f).contains(&v)
        || (0x2028..=0x202f).contains(&v)
        || (0x205f..=0x2064).contains(&v)
        || v == 0x3000
        || v == 0xfeff
        || (0xe000..=0xf8ff).contains(&v)
        || v >= 0xf0000)
}

/// A JSON string as Python's encoder writes it with `ensure_ascii=True`.
pub(crate) fn push_ascii_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_conversions_follow_python() {
        assert_eq!(Value::Float(2.9).py_int(), Ok(Some(2)));
        assert_eq!(Value::Float(-2.9).py_int(), Ok(Some(-2)));
        assert_eq!(Value::Float(f64::NAN).py_int(), Ok(None));
        assert!(Value::Float(f64::INFINITY).py_int().is_err());
        assert_eq!(Value::Str(" 1_000 ".into()).py_int(), Ok(Some(1000)));
        assert_eq!(Value::Str("1.5".into()).py_int(), Ok(None));
        assert_eq!(Value::Str("1__0".into()).py_int(), Ok(None));
        assert_eq!(Value::Bool(true).py_int(), Ok(Some(1)));
        assert_eq!(Value::Null.py_int(), Ok(None));
    }

    #[test]
    fn float_conversions_follow_python() {
        assert_eq!(py_float_from_str(" 1_0.5 "), Some(10.5));
        assert_eq!(py_float_from_str("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(py_float_from_str("1e3"), Some(1000.0));
        assert_eq!(py_float_from_str("_1"), None);
        assert_eq!(py_float_from_str("abc"), None);
        assert_eq!(py_float_from_str("0x10"), None);
        assert_eq!(py_float_from_str(""), None);
    }

    #[test]
    fn str_and_dumps_follow_python() {
        let v = Value::Array(vec![
            Value::Int(1),
            Value::Float(2.5),
            Value::Null,
            Value::Bool(true),
            Value::Str("it's é".into()),
            Value::Object(vec![("k".into(), Value::Float(1e16))]),
        ]);
        assert_eq!(
            v.py_str(),
            r#"[1, 2.5, None, True, "it's é", {'k': 1e+16}]"#
        );
        assert_eq!(
            v.py_json_dumps(),
            r#"[1, 2.5, null, true, "it's \u00e9", {"k": 1e+16}]"#
        );
        assert_eq!(Value::Float(f64::NAN).py_json_dumps(), "NaN");
        assert_eq!(Value::Float(f64::INFINITY).py_str(), "inf");
    }
}
