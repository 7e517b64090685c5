//! The Chrome-JSON side of [`TraceOut`]: instants and counters of the kinds PyTorch's
//! merge does not know (memory, memory pools), written into the merged trace.

use std::io::Write;

use super::sink::EventSink;
use super::span::py_max;
use crate::json::write::ObjectWriter;
use crate::memory_out::{write_memory, write_memory_pool, MemoryTotals};
use crate::out::{Arg, TraceOut};
use crate::WindowEvent;

/// Writes the extra kinds of one merge, keeping the running totals they need.
#[derive(Debug)]
pub(crate) struct ChromeOut {
    base_ns: i128,
    memory: MemoryTotals,
}

impl ChromeOut {
    pub fn new(base_ns: i128) -> Self {
        Self {
            base_ns,
            memory: MemoryTotals::default(),
        }
    }

    /// Write event `e` (an extra kind) into `sink`.
    pub fn write<W: Write>(&mut self, sink: &mut EventSink<W>, e: &WindowEvent) {
        let mut out = SinkOut {
            sink,
            base_ns: self.base_ns,
        };
        match e {
            WindowEvent::Memory(m) => write_memory(m, &mut out, &mut self.memory),
            WindowEvent::MemoryPool(p) => write_memory_pool(p, &mut out),
            _ => {}
        }
    }

    /// Event `e` left out (it has no time): its allocation or free still counts for
    /// the memory totals of the events after it.
    pub fn account(&mut self, e: &WindowEvent) {
        if let WindowEvent::Memory(m) = e {
            write_memory(m, &mut Discard, &mut self.memory);
        }
    }
}

/// A [`TraceOut`] that writes nothing.
struct Discard;

impl TraceOut for Discard {
    fn instant(&mut self, _: i128, _: i128, _: i128, _: &str, _: &str, _: &[(&str, Arg<'_>)]) {}

    fn counter(&mut self, _: i128, _: i128, _: &str, _: &[(&str, f64)]) {}
}

struct SinkOut<'s, W: Write> {
    sink: &'s mut EventSink<W>,
    base_ns: i128,
}

impl<W: Write> SinkOut<'_, W> {
    fn ts(&self, ts_ns: i128) -> f64 {
        py_max((ts_ns - self.base_ns) as f64 / 1000.0, 0.0)
    }
}

fn write_args(b: &mut Vec<u8>, args: &[(&str, Arg<'_>)]) {
    let mut w = ObjectWriter::new(b);
    for (k, v) in args {
        match v {
            Arg::Int(i) => w.int(k, *i),
            Arg::Float(f) => w.float(k, *f),
            Arg::Str(s) => w.str(k, s),
        };
    }
    w.end();
}

impl<W: Write> TraceOut for SinkOut<'_, W> {
    fn instant(
        &mut self,
        pid: i128,
        tid: i128,
        ts_ns: i128,
        name: &str,
        cat: &str,
        args: &[(&str, Arg<'_>)],
    ) {
        let ts = self.ts(ts_ns);
        ObjectWriter::new(self.sink.element())
            .str("ph", "i")
            .str("cat", cat)
            .str("s", "t")
            .str("name", name)
            .int("pid", pid)
            .int("tid", tid)
            .float("ts", ts)
            .with("args", |b| write_args(b, args))
            .end();
    }

    fn counter(&mut self, pid: i128, ts_ns: i128, name: &str, values: &[(&str, f64)]) {
        let ts = self.ts(ts_ns);
        ObjectWriter::new(self.sink.element())
            .str("ph", "C")
            .str("name", name)
            .int("pid", pid)
            .int("tid", 0)
            .float("ts", ts)
            .with("args", |b| {
                let mut w = ObjectWriter::new(b);
                for (k, v) in values {
                    w.float(k, *v);
                }
                w.end();
            })
            .end();
    }
}
