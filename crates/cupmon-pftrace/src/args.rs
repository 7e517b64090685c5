//! Event arguments, written as Perfetto `DebugAnnotation`s (the `args` of a
//! slice in the UI). Dicts and arrays nest as `dict_entries` /
//! `array_values`, so JSON-like args keep their shape; names and short
//! string values are interned.

use crate::fields::annotation as f;
use crate::intern::{Iid, Interner, Tables};
use crate::wire;

/// One named argument of an event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arg<'a> {
    pub name: &'a str,
    pub value: ArgValue<'a>,
}

impl<'a> Arg<'a> {
    pub fn new(name: &'a str, value: ArgValue<'a>) -> Self {
        Self { name, value }
    }
}

/// An argument's value. Nested values borrow their children, so a caller
/// builds them on its stack without allocating per event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue<'a> {
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
    Str(&'a str),
    /// A JSON object: entries in order.
    Dict(&'a [Arg<'a>]),
    /// A JSON array.
    Array(&'a [ArgValue<'a>]),
}

/// Writes `name` as `name_iid` when it is interned, else inline.
fn write_name(buf: &mut Vec<u8>, table: &mut Interner, pending: &mut Vec<u8>, name: &str) {
    match table.lookup(name, pending).get() {
        Some(iid) => wire::uint(buf, f::NAME_IID, iid),
        None => wire::bytes(buf, f::NAME, name.as_bytes()),
    }
}

/// The body of one `DebugAnnotation` (name, then value).
fn write_body(buf: &mut Vec<u8>, tables: &mut Tables, name: Option<&str>, value: &ArgValue<'_>) {
    if let Some(name) = name {
        write_name(buf, &mut tables.arg_names, &mut tables.pending, name);
    }
    match *value {
        ArgValue::Int(v) => wire::int(buf, f::INT_VALUE, v),
        ArgValue::Uint(v) => wire::uint(buf, f::UINT_VALUE, v),
        ArgValue::Double(v) => wire::double(buf, f::DOUBLE_VALUE, v),
        ArgValue::Bool(v) => wire::uint(buf, f::BOOL_VALUE, u64::from(v)),
        ArgValue::Str(s) => match tables.string_values.lookup(s, &mut tables.pending) {
            Iid::Known(iid) | Iid::New(iid) => wire::uint(buf, f::STRING_VALUE_IID, iid),
            Iid::Inline => wire::bytes(buf, f::STRING_VALUE, s.as_bytes()),
        },
        ArgValue::Dict(entries) => {
            for entry in entries {
                let at = wire::begin(buf, f::DICT_ENTRIES);
                write_body(buf, tables, Some(entry.name), &entry.value);
                wire::end(buf, at);
            }
        }
        ArgValue::Array(items) => {
            for item in items {
                let at = wire::begin(buf, f::ARRAY_VALUES);
                write_body(buf, tables, None, item);
                wire::end(buf, at);
            }
        }
    }
}

/// Writes `args` as repeated `field` (`TrackEvent.debug_annotations`).
pub(crate) fn write_args(buf: &mut Vec<u8>, field: u32, tables: &mut Tables, args: &[Arg<'_>]) {
    for arg in args {
        let at = wire::begin(buf, field);
        write_body(buf, tables, Some(arg.name), &arg.value);
        wire::end(buf, at);
    }
}
