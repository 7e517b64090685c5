//! Writing JSON the way Python's `json.dump` does where it matters for meaning
//! (floats in shortest round-trip form, NaN/Infinity literals), and fast.
//!
//! Strings are escaped by serde_json; floats are not, because serde_json
//! writes NaN and infinities as `null` before any `Formatter` sees them, where
//! Python (and so the merge) writes `NaN` and `Infinity` (bench/RESULTS-json.md).

use super::value::Value;

/// Append Python's `repr(f)` for a float (`1e-05`, `1e+16`, `0.0`, `nan`, `inf`).
pub(crate) fn push_py_float_repr(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("nan");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
    } else {
        let mut buf = Vec::with_capacity(32);
        push_finite_repr(&mut buf, f);
        out.push_str(std::str::from_utf8(&buf).unwrap_or_default());
    }
}

/// Append a float as Python's `json.dumps` writes it (`NaN`, `Infinity`, else repr).
pub(crate) fn push_py_json_float(out: &mut String, f: f64) {
    let mut buf = Vec::with_capacity(32);
    write_json_float(&mut buf, f);
    out.push_str(std::str::from_utf8(&buf).unwrap_or_default());
}

/// Write a float as Python's `json.dump` does.
#[inline]
pub(crate) fn write_json_float(out: &mut Vec<u8>, f: f64) {
    if f.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if f.is_infinite() {
        out.extend_from_slice(if f > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else {
        push_finite_repr(out, f);
    }
}

/// Python's float repr: shortest round-trip digits, fixed notation when the
/// decimal exponent is in [-4, 16), else `d.ddde+XX`.
fn push_finite_repr(out: &mut Vec<u8>, f: f64) {
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(f).as_bytes();
    // ryu agrees with Python except for exponent notation and 1e-5 <= |f| < 1e-4.
    let needs_rework = s.contains(&b'e') || {
        let body = s.strip_prefix(b"-").unwrap_or(s);
        body.starts_with(b"0.0000")
    };
    if !needs_rework {
        out.extend_from_slice(s);
        return;
    }
    let (neg, digits, exp) = decompose(s);
    if neg {
        out.push(b'-');
    }
    // ryu writes fixed notation for every exponent in [-4, 16) but -5; only
    // exponent notation reaches here.
    debug_assert!(!(-4..16).contains(&exp));
    out.push(digits[0]);
    if digits.len() > 1 {
        out.push(b'.');
        out.extend_from_slice(&digits[1..]);
    }
    out.push(b'e');
    out.push(if exp < 0 { b'-' } else { b'+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push(b'0');
    }
    out.extend_from_slice(e.to_string().as_bytes());
}

/// Split ryu's text into sign, significant digits (no leading/trailing zeros)
/// and the decimal exponent of the first digit.
fn decompose(s: &[u8]) -> (bool, Vec<u8>, i32) {
    let neg = s.first() == Some(&b'-');
    let s = if neg { &s[1..] } else { s };
    let (mantissa, exp_part) = match s.iter().position(|&c| c == b'e') {
        Some(i) => (&s[..i], std::str::from_utf8(&s[i + 1..]).ok()),
        None => (s, None),
    };
    let exp_shift: i32 = exp_part.and_then(|e| e.parse().ok()).unwrap_or(0);
    let point = mantissa
        .iter()
        .position(|&c| c == b'.')
        .unwrap_or(mantissa.len());
    let all: Vec<u8> = mantissa.iter().copied().filter(|&c| c != b'.').collect();
    let first_nonzero = all.iter().position(|&c| c != b'0').unwrap_or(0);
    let mut digits = all[first_nonzero..].to_vec();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    let exp = point as i32 - 1 - first_nonzero as i32 + exp_shift;
    (neg, digits, exp)
}

/// Append a JSON string with serde_json's escaping: UTF-8 kept as is; quote,
/// backslash and control characters escaped, `\b` and `\f` included, as
/// Python's encoder escapes them. (Measured against the former hand-written
/// escaping in bench/RESULTS-json.md: no difference, so serde does it.)
#[inline]
pub(crate) fn write_json_str(out: &mut Vec<u8>, s: &str) {
    // Serialising a str into a Vec cannot fail: there is no error to keep.
    let _ = serde::Serialize::serialize(s, &mut serde_json::Serializer::new(out));
}

#[inline]
pub(crate) fn write_int(out: &mut Vec<u8>, v: i128) {
    let mut buf = itoa::Buffer::new();
    // Nearly every id and time fits 64 bits, whose formatting is several times
    // cheaper than 128-bit division.
    let text = match i64::try_from(v) {
        Ok(small) => buf.format(small),
        Err(_) => buf.format(v),
    };
    out.extend_from_slice(text.as_bytes());
}

/// Write a value as compact JSON (what `json.dump(..., separators=(",", ":"))`
/// means, UTF-8 kept as is).
pub(crate) fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(i) => write_int(out, *i),
        Value::BigInt(d) => out.extend_from_slice(d.as_bytes()),
        Value::Float(f) => write_json_float(out, *f),
        Value::Str(s) => write_json_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            out.push(b'{');
            for (i, (k, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_str(out, k);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Writes one JSON object member by member.
#[derive(Debug)]
pub(crate) struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> ObjectWriter<'a> {
    #[inline]
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Self { out, first: true }
    }

    /// Start a member whose key is plain ASCII needing no escapes.
    #[inline]
    fn key(&mut self, key: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    #[inline]
    pub fn str(&mut self, key: &str, v: &str) -> &mut Self {
        let out = self.key(key);
        write_json_str(out, v);
        self
    }

    #[inline]
    pub fn int(&mut self, key: &str, v: i128) -> &mut Self {
        let out = self.key(key);
        write_int(out, v);
        self
    }

    #[inline]
    pub fn float(&mut self, key: &str, v: f64) -> &mut Self {
        let out = self.key(key);
        write_json_float(out, v);
        self
    }

    /// A member whose value is written by `f`.
    #[inline]
    pub fn with(&mut self, key: &str, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        let out = self.key(key);
        f(out);
        self
    }

    #[inline]
    pub fn end(&mut self) {
        self.out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(f: f64) -> String {
        let mut s = String::new();
        push_py_float_repr(&mut s, f);
        s
    }

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (1e-5, "1e-05"),
            (-1.25e-5, "-1.25e-05"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (5122232963589.389, "5122232963589.389"),
            (1e300, "1e+300"),
            (2.5e-300, "2.5e-300"),
            (123456.0, "123456.0"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
        ];
        for (f, want) in cases {
            assert_eq!(repr(f), want, "{f:e}");
        }
    }

    #[test]
    fn strings_escape_controls() {
        let mut out = Vec::new();
        write_json_str(&mut out, "a\"b\\c\n\u{1}\u{8}é");
        assert_eq!(
            String::from_utf8(out).expect("utf8"),
            "\"a\\\"b\\\\c\\n\\u0001\\bé\""
        );
    }
}
