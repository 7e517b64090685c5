//! The Chrome JSON sink of the typed event stream: each [`TraceEvent`] written as
//! Kineto (and PyTorch's merge) writes it, its members in their order, into a
//! buffer flushed to the output in large blocks.

use std::io::{self, Write};

use crate::event::{ArgValue, Args, EventSink, FlowEnd, Id, Phase, Scope, TraceEvent};
use crate::json::write::{write_int, write_json_float, write_json_str, ObjectWriter};

const FLUSH_AT: usize = 1 << 20;
const FLOW_CATEGORY: &str = "ac2g";

/// The elements of `traceEvents` as Chrome JSON, with the commas between them.
#[derive(Debug)]
pub(crate) struct ChromeEvents<W: Write> {
    out: W,
    buf: Vec<u8>,
    first: bool,
    written: u64,
}

impl<W: Write> ChromeEvents<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            first: true,
            written: 0,
        }
    }

    /// Start the next array element (counted); returns the buffer to write it into.
    #[inline]
    fn element(&mut self) -> &mut Vec<u8> {
        if self.first {
            self.first = false;
        } else {
            self.buf.push(b',');
        }
        self.written += 1;
        &mut self.buf
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Flush everything and hand the output back.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_buf()?;
        Ok(self.out)
    }
}

impl<W: Write> EventSink for ChromeEvents<W> {
    fn event(&mut self, e: &TraceEvent<'_>) -> io::Result<()> {
        write_event(self.element(), e);
        if let (Some((id, end)), Some(ts)) = (e.flow, e.ts) {
            write_flow(self.element(), end, id, e, ts);
        }
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn input_events(
        &mut self,
        copy: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.flush_buf()?;
        copy(&mut self.out)
    }

    fn written(&self) -> u64 {
        self.written
    }
}

fn id(w: &mut ObjectWriter<'_>, key: &str, v: Option<&Id<'_>>) {
    match v {
        Some(Id::Int(i)) => {
            w.int(key, *i);
        }
        Some(Id::Text(t)) => {
            w.str(key, t);
        }
        None => {}
    }
}

/// One event, its members in the order of its phase.
fn write_event(b: &mut Vec<u8>, e: &TraceEvent<'_>) {
    let mut w = ObjectWriter::new(b);
    let ts = e.ts.unwrap_or(0.0);
    match e.ph {
        Phase::Complete => {
            w.str("ph", "X").str("cat", &e.cat).str("name", &e.name);
            id(&mut w, "pid", e.pid.as_ref());
            id(&mut w, "tid", e.tid.as_ref());
            w.float("ts", ts).float("dur", e.dur.unwrap_or(0.0));
        }
        Phase::Instant => {
            w.str("ph", "i");
            if !e.cat.is_empty() {
                w.str("cat", &e.cat);
            }
            let scope = match e.scope {
                Scope::Global => "g",
                Scope::Process => "p",
                Scope::Thread => "t",
            };
            w.str("s", scope).str("name", &e.name);
            id(&mut w, "pid", e.pid.as_ref());
            id(&mut w, "tid", e.tid.as_ref());
            w.float("ts", ts);
        }
        Phase::Counter => {
            w.str("ph", "C").str("name", &e.name);
            id(&mut w, "pid", e.pid.as_ref());
            id(&mut w, "tid", e.tid.as_ref());
            w.float("ts", ts);
        }
        Phase::Metadata => {
            w.str("ph", "M").str("name", &e.name).float("ts", ts);
            id(&mut w, "pid", e.pid.as_ref());
            id(&mut w, "tid", e.tid.as_ref());
        }
        // The writers give only the phases above; an input's other events are
        // copied as their text.
        _ => debug_assert!(false, "no Chrome form for {:?}", e.ph),
    }
    match e.args {
        Args::None => {}
        Args::Fields(fields) => {
            w.with("args", |b| write_fields(b, fields));
        }
        Args::Json(text) => {
            w.with("args", |b| b.extend_from_slice(text));
        }
    }
    w.end();
}

fn write_fields(b: &mut Vec<u8>, fields: &[(&str, ArgValue<'_>)]) {
    b.push(b'{');
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        write_key(b, key);
        match value {
            ArgValue::Int(v) => write_int(b, *v),
            ArgValue::Float(v) => write_json_float(b, *v),
            ArgValue::Str(s) => write_json_str(b, s),
            ArgValue::Value(v) => crate::json::write::write_value(b, v),
            ArgValue::Json(text) => b.extend_from_slice(text.as_bytes()),
            ArgValue::Dims(v) => write_dims(b, v),
        }
    }
    b.push(b'}');
}

/// Kineto's `[x, y, z]` (with its spaces), without formatting a String per kernel.
#[inline]
fn write_dims(b: &mut Vec<u8>, v: &[i32; 3]) {
    b.push(b'[');
    for (i, d) in v.iter().enumerate() {
        if i > 0 {
            b.extend_from_slice(b", ");
        }
        b.extend_from_slice(itoa::Buffer::new().format(*d).as_bytes());
    }
    b.push(b']');
}

/// `"key":`, escaped only when it has to be (arg keys are plain ASCII but for
/// a window's own args).
#[inline]
fn write_key(b: &mut Vec<u8>, key: &str) {
    if key
        .bytes()
        .all(|c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\')
    {
        b.push(b'"');
        b.extend_from_slice(key.as_bytes());
        b.extend_from_slice(b"\":");
    } else {
        write_json_str(b, key);
        b.push(b':');
    }
}

/// The `s` (launch) or `f` (GPU work) event of a slice's arrow, at its start.
fn write_flow(b: &mut Vec<u8>, end: FlowEnd, corr: i128, e: &TraceEvent<'_>, ts: f64) {
    let mut w = ObjectWriter::new(b);
    w.str("ph", if end == FlowEnd::Start { "s" } else { "f" })
        .int("id", corr);
    id(&mut w, "pid", e.pid.as_ref());
    id(&mut w, "tid", e.tid.as_ref());
    w.float("ts", ts)
        .str("cat", FLOW_CATEGORY)
        .str("name", FLOW_CATEGORY);
    if end == FlowEnd::Finish {
        w.str("bp", "e");
    }
    w.end();
}
