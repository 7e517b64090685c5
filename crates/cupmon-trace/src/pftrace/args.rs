//! An event's `args` object, written straight from its JSON text into the
//! Perfetto event as debug annotations: objects as dicts, arrays as arrays,
//! integers as int (or uint past i64), floats as double, `null` and numbers
//! that fit no 64-bit field as JSON text, which trace processor parses.

use cupmon_pftrace::{ArgValue, ArgsOut, Container, WriteArgs};

use super::event::text;
use crate::json::read::{ReadResult, Reader};

/// The text of an `args` value, already validated.
#[derive(Debug)]
pub(super) struct JsonArgs<'a>(pub &'a [u8]);

impl WriteArgs for JsonArgs<'_> {
    fn write_args(&self, out: &mut ArgsOut<'_>) {
        let mut r = Reader::new(self.0);
        // The text was validated when the event was read: no error can come.
        let _ = write_top(out, &mut r);
    }
}

/// The members of the object; an `args` that is not an object becomes one
/// arg named `args`.
fn write_top(out: &mut ArgsOut<'_>, r: &mut Reader<'_>) -> ReadResult<()> {
    if r.peek()? != b'{' {
        return write_value(out, "args", r);
    }
    r.pos += 1;
    if r.empty_close(b'}')? {
        return Ok(());
    }
    loop {
        let key = text(r.key()?);
        write_value(out, &key, r)?;
        if !r.comma_or(b'}')? {
            return Ok(());
        }
    }
}

fn write_value(out: &mut ArgsOut<'_>, name: &str, r: &mut Reader<'_>) -> ReadResult<()> {
    match r.peek()? {
        b'"' => {
            let s = text(r.string()?);
            out.value(name, ArgValue::Str(&s));
        }
        b'{' => {
            r.pos += 1;
            out.begin(name, Container::Dict);
            if !r.empty_close(b'}')? {
                loop {
                    let key = text(r.key()?);
                    write_value(out, &key, r)?;
                    if !r.comma_or(b'}')? {
                        break;
                    }
                }
            }
            out.end();
        }
        b'[' => {
            r.pos += 1;
            out.begin(name, Container::Array);
            if !r.empty_close(b']')? {
                loop {
                    write_value(out, "", r)?;
                    if !r.comma_or(b']')? {
                        break;
                    }
                }
            }
            out.end();
        }
        c @ (b't' | b'f' | b'n') => {
            r.skip_value()?;
            out.value(
                name,
                match c {
                    b't' => ArgValue::Bool(true),
                    b'f' => ArgValue::Bool(false),
                    _ => ArgValue::Json("null"),
                },
            );
        }
        b'N' | b'I' => {
            let start = r.pos;
            r.skip_value()?;
            let v = if r.b[start] == b'N' {
                f64::NAN
            } else {
                f64::INFINITY
            };
            out.value(name, ArgValue::Double(v));
        }
        _ => {
            let n = r.number()?;
            let text = std::str::from_utf8(n.text).unwrap_or("0");
            let value = match n.as_i128() {
                Some(i) => match (i64::try_from(i), u64::try_from(i)) {
                    (Ok(v), _) => ArgValue::Int(v),
                    (_, Ok(v)) => ArgValue::Uint(v),
                    _ => ArgValue::Json(text),
                },
                None if n.is_int => ArgValue::Json(text),
                None => ArgValue::Double(n.as_f64()),
            };
            out.value(name, value);
        }
    }
    Ok(())
}
