//! The tokens [`super::read::Reader`] hands out before anything is decoded: a
//! string's raw text between its quotes, a number's text; each decodes on demand as
//! Python's `json` would.

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
