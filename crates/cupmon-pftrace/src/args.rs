//! Event arguments, written as Perfetto `DebugAnnotation`s (the `args` of a
//! slice in the UI). Dicts and arrays nest as `dict_entries` /
//! `array_values`, so JSON-like args keep their shape; names and short
//! string values are interned.
//!
//! Args come as [`Arg`] slices built on the caller's stack, or, for values
//! read from elsewhere (a JSON trace's `args` object) whose shape is only
//! known while reading them, through [`WriteArgs`], which writes them one by
//! one into an [`ArgsOut`] without building a tree first.

use crate::fields::{annotation as f, track_event as te};
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
    /// JSON text that trace processor parses itself (`legacy_json_value`):
    /// for `null`, and for numbers that fit no 64-bit field.
    Json(&'a str),
}

/// Args that write themselves into an event (see [`ArgsOut`]).
pub trait WriteArgs: std::fmt::Debug {
    fn write_args(&self, out: &mut ArgsOut<'_>);
}

/// Whether a nested value is a dict or an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    Dict,
    Array,
}

#[derive(Debug)]
struct Open {
    at: wire::Nested,
    kind: Container,
    empty: bool,
}

/// Where [`WriteArgs`] writes: the event's `debug_annotations`. Inside a
/// dict (and at the top) values are named; inside an array the name given
/// is ignored.
#[derive(Debug)]
pub struct ArgsOut<'a> {
    buf: &'a mut Vec<u8>,
    tables: &'a mut Tables,
    open: Vec<Open>,
}

impl<'a> ArgsOut<'a> {
    fn new(buf: &'a mut Vec<u8>, tables: &'a mut Tables) -> Self {
        Self {
            buf,
            tables,
            open: Vec::new(),
        }
    }

    /// Starts one annotation in the innermost container; true when it is
    /// named (not an array item).
    fn start(&mut self, name: &str) -> (wire::Nested, bool) {
        let (field, named) = match self.open.last_mut() {
            None => (te::DEBUG_ANNOTATIONS, true),
            Some(o) => {
                o.empty = false;
                match o.kind {
                    Container::Dict => (f::DICT_ENTRIES, true),
                    Container::Array => (f::ARRAY_VALUES, false),
                }
            }
        };
        let at = wire::begin(self.buf, field);
        if named {
            write_name(
                self.buf,
                &mut self.tables.arg_names,
                &mut self.tables.pending,
                name,
            );
        }
        (at, named)
    }

    /// A value (scalar, or nested from borrowed [`Arg`]s).
    pub fn value(&mut self, name: &str, value: ArgValue<'_>) {
        let (at, _) = self.start(name);
        write_body(self.buf, self.tables, None, &value);
        wire::end(self.buf, at);
    }

    /// Opens a dict or an array; values until the matching [`ArgsOut::end`]
    /// go into it.
    pub fn begin(&mut self, name: &str, kind: Container) {
        let (at, _) = self.start(name);
        self.open.push(Open {
            at,
            kind,
            empty: true,
        });
    }

    /// Closes the innermost dict or array (an empty one is written as `{}` or
    /// `[]` JSON text: on the wire an annotation without entries has no shape).
    pub fn end(&mut self) {
        let Some(o) = self.open.pop() else { return };
        if o.empty {
            let text = match o.kind {
                Container::Dict => "{}",
                Container::Array => "[]",
            };
            wire::bytes(self.buf, f::LEGACY_JSON_VALUE, text.as_bytes());
        }
        wire::end(self.buf, o.at);
    }

    fn close_all(&mut self) {
        while !self.open.is_empty() {
            self.end();
        }
    }
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
        ArgValue::Json(text) => wire::bytes(buf, f::LEGACY_JSON_VALUE, text.as_bytes()),
        ArgValue::Dict([]) => wire::bytes(buf, f::LEGACY_JSON_VALUE, b"{}"),
        ArgValue::Array([]) => wire::bytes(buf, f::LEGACY_JSON_VALUE, b"[]"),
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

/// Writes `args`, then what `more` writes, as `TrackEvent.debug_annotations`.
pub(crate) fn write_args(
    buf: &mut Vec<u8>,
    tables: &mut Tables,
    args: &[Arg<'_>],
    more: Option<&dyn WriteArgs>,
) {
    for arg in args {
        let at = wire::begin(buf, te::DEBUG_ANNOTATIONS);
        write_body(buf, tables, Some(arg.name), &arg.value);
        wire::end(buf, at);
    }
    if let Some(more) = more {
        let mut out = ArgsOut::new(buf, tables);
        more.write_args(&mut out);
        out.close_all();
    }
}
