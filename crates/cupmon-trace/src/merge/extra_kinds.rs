//! The kinds PyTorch's merge does not know (memory, memory pools), written into a
//! complete trace as instants and counters (`kinds_out.rs`) through [`TraceOut`]:
//! typed events for whichever sink the trace goes to.

use std::borrow::Cow;
use std::io;

use super::span::py_max;
use crate::event::{ArgValue, EventSink, Id, Phase, TraceEvent};
use crate::kinds_out::{write_kind, KindTotals};
use crate::out::{Arg, TraceOut};
use crate::WindowEvent;

/// Writes the extra kinds of one merge, keeping the running totals they need.
#[derive(Debug)]
pub(crate) struct ExtraKinds {
    base_ns: i128,
    totals: KindTotals,
}

impl ExtraKinds {
    pub fn new(base_ns: i128) -> Self {
        Self {
            base_ns,
            totals: KindTotals::default(),
        }
    }

    /// Write event `e` (an extra kind) into `sink`.
    pub fn write(&mut self, sink: &mut dyn EventSink, e: &WindowEvent) -> io::Result<()> {
        let mut out = SinkOut {
            sink,
            base_ns: self.base_ns,
            failed: None,
        };
        write_kind(e, &mut out, &mut self.totals);
        out.failed.map_or(Ok(()), Err)
    }

    /// Event `e` left out (it has no time): its allocation or free still counts for
    /// the memory totals of the events after it.
    pub fn account(&mut self, e: &WindowEvent) {
        write_kind(e, &mut Discard, &mut self.totals);
    }
}

/// A [`TraceOut`] that writes nothing.
struct Discard;

impl TraceOut for Discard {
    fn instant(&mut self, _: i128, _: i128, _: i128, _: &str, _: &str, _: &[(&str, Arg<'_>)]) {}

    fn counter(&mut self, _: i128, _: i128, _: &str, _: &[(&str, f64)]) {}
}

struct SinkOut<'s> {
    sink: &'s mut dyn EventSink,
    base_ns: i128,
    /// The first write that failed (the later ones are not tried).
    failed: Option<io::Error>,
}

impl SinkOut<'_> {
    fn ts(&self, ts_ns: i128) -> f64 {
        py_max((ts_ns - self.base_ns) as f64 / 1000.0, 0.0)
    }

    fn send(&mut self, e: &TraceEvent<'_>) {
        if self.failed.is_none() {
            self.failed = self.sink.event(e).err();
        }
    }
}

impl TraceOut for SinkOut<'_> {
    fn instant(
        &mut self,
        pid: i128,
        tid: i128,
        ts_ns: i128,
        name: &str,
        cat: &str,
        args: &[(&str, Arg<'_>)],
    ) {
        let args: Vec<(&str, ArgValue<'_>)> = args
            .iter()
            .map(|&(k, v)| {
                let v = match v {
                    Arg::Int(i) => ArgValue::Int(i),
                    Arg::Float(f) => ArgValue::Float(f),
                    Arg::Str(s) => ArgValue::Str(s),
                };
                (k, v)
            })
            .collect();
        let event = TraceEvent {
            name: Cow::Borrowed(name),
            cat: Cow::Borrowed(cat),
            pid: Some(Id::Int(pid)),
            tid: Some(Id::Int(tid)),
            ts: Some(self.ts(ts_ns)),
            ..TraceEvent::new(Phase::Instant)
        };
        self.send(&event.with_args(&args));
    }

    fn counter(&mut self, pid: i128, ts_ns: i128, name: &str, values: &[(&str, f64)]) {
        let args: Vec<(&str, ArgValue<'_>)> = values
            .iter()
            .map(|&(k, v)| (k, ArgValue::Float(v)))
            .collect();
        let event = TraceEvent {
            name: Cow::Borrowed(name),
            pid: Some(Id::Int(pid)),
            tid: Some(Id::Int(0)),
            ts: Some(self.ts(ts_ns)),
            ..TraceEvent::new(Phase::Counter)
        };
        self.send(&event.with_args(&args));
    }
}
