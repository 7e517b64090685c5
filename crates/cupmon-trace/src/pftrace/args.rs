//! An event's `args` object, written straight from its JSON text into the
//! Perfetto event as debug annotations: objects as dicts, arrays as arrays,
//! integers as int (or uint past i64), floats as double, `null` and numbers
//! that fit no 64-bit field as JSON text, which trace processor parses.

use cupmon_pftrace::{ArgValue, ArgsOut, Container, WriteArgs};

use super::event::text;
use crate::event::{self, Args};
use crate::json::read::{ReadResult, Reader};
use crate::json::value::Value;

/// A typed event's args: each value as its JSON text would be written (see
/// [`JsonArgs`]), so an arg is the same whether it came typed or as text.
#[derive(Debug)]
pub(super) struct TypedArgs<'a>(pub Args<'a>);

impl WriteArgs for TypedArgs<'_> {
    fn write_args(&self, out: &mut ArgsOut<'_>) {
        match self.0 {
            Args::None => {}
            Args::Json(text) => JsonArgs(text).write_args(out),
            Args::Fields(fields) => {
                for (key, value) in fields {
                    write_typed(out, key, value);
                }
            }
        }
    }
}

fn int_arg(out: &mut ArgsOut<'_>, name: &str, i: i128) {
    match (i64::try_from(i), u64::try_from(i)) {
        (Ok(v), _) => out.value(name, ArgValue::Int(v)),
        (_, Ok(v)) => out.value(name, ArgValue::Uint(v)),
        _ => out.value(name, ArgValue::Json(&i.to_string())),
    }
}

fn write_typed(out: &mut ArgsOut<'_>, name: &str, value: &event::ArgValue<'_>) {
    match value {
        event::ArgValue::Int(i) => int_arg(out, name, *i),
        event::ArgValue::Float(f) => out.value(name, ArgValue::Double(*f)),
        event::ArgValue::Str(s) => out.value(name, ArgValue::Str(s)),
        event::ArgValue::Value(v) => write_json_value(out, name, v),
        event::ArgValue::Json(text) => {
            // A number at the very end would wait for its last digit.
            let padded = format!("{text} ");
            let mut r = Reader::new(padded.as_bytes());
            let _ = write_value(out, name, &mut r);
        }
        event::ArgValue::Dims(v) => {
            out.begin(name, Container::Array);
            for d in v {
                out.value("", ArgValue::Int(i64::from(*d)));
            }
            out.end();
        }
    }
}

fn write_json_value(out: &mut ArgsOut<'_>, name: &str, v: &Value) {
    match v {
        Value::Null => out.value(name, ArgValue::Json("null")),
        Value::Bool(b) => out.value(name, ArgValue::Bool(*b)),
        Value::Int(i) => int_arg(out, name, *i),
        Value::BigInt(d) => out.value(name, ArgValue::Json(d)),
        Value::Float(f) => out.value(name, ArgValue::Double(*f)),
        Value::Str(s) => out.value(name, ArgValue::Str(s)),
        Value::Array(items) => {
            out.begin(name, Container::Array);
            for item in items {
                write_json_value(out, "", item);
            }
            out.end();
        }
        Value::Object(members) => {
            out.begin(name, Container::Dict);
            for (k, item) in members {
                write_json_value(out, k, item);
            }
            out.end();
        }
    }
}

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
