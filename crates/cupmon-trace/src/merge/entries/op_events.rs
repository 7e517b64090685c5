//! The window's `X` events, as PyTorch's merge writes them: registered API calls, GPU ops
//! (with a complete trace's Kineto names, args and overlap lanes) and overhead, and
//! the `ac2g` arrows from a launch to its GPU op.

use std::io::Write;

use super::{dur_us, export_tid, raise, rel_us, Entries, Joined, OVERHEAD_PID};
use crate::json::write::ObjectWriter;
use crate::merge::args::{gpu_args, ArgValue};
use crate::merge::complete::{kineto_args, kineto_name, KinetoArg, LANE_TID};
use crate::merge::sink::EventSink;
use crate::merge::span::TimeRange;
use crate::merge::window_input::{ApiEvent, GpuEvent, OverheadEvent};
use crate::TraceError;

const FLOW_CATEGORY: &str = "ac2g";

impl Entries<'_> {
    pub(super) fn write_api<W: Write>(
        &self,
        sink: &mut EventSink<W>,
        a: &ApiEvent,
        cpu_op: Option<i128>,
        range: &mut TimeRange,
    ) {
        if !a.registered {
            return;
        }
        let pid = a.process_id;
        let tid = export_tid(self.thread_id(a));
        let name = a.domain.name(a.cbid);
        let ts = rel_us(a.start_ns, self.base_ns);
        let dur = dur_us(a.start_ns, a.end_ns);
        let cat = match a.domain {
            cupmon_records::ApiDomain::Runtime => "cuda_runtime",
            cupmon_records::ApiDomain::Driver => "cuda_driver",
        };
        ObjectWriter::new(sink.element())
            .str("ph", "X")
            .str("cat", cat)
            .str("name", &name)
            .int("pid", pid)
            .int("tid", tid)
            .float("ts", ts)
            .float("dur", dur)
            .with("args", |b| {
                let mut w = ObjectWriter::new(b);
                if let Some(id) = cpu_op.filter(|_| self.complete.is_some()) {
                    w.int("External id", id);
                }
                w.int("cbid", a.cbid)
                    .int("correlation", a.correlation_id)
                    .end();
            })
            .end();
        range.add(ts, dur);
        if a.correlation_id != 0 && crate::requires_flow(a.domain, &name) {
            flow(sink, FlowEnd::Start, a.correlation_id, pid, tid, ts);
            // The launch's Python stack as Kineto's `python_function` events over it.
            if let Some(c) = &self.complete {
                for frame in c.python_frames(a.correlation_id) {
                    ObjectWriter::new(sink.element())
                        .str("ph", "X")
                        .str("cat", "python_function")
                        .str("name", &frame)
                        .int("pid", pid)
                        .int("tid", tid)
                        .float("ts", ts)
                        .float("dur", dur)
                        .end();
                }
            }
        }
    }

    pub(super) fn write_gpu<W: Write>(
        &self,
        sink: &mut EventSink<W>,
        g: &GpuEvent,
        joined: Joined,
        range: &mut TimeRange,
    ) {
        let tid = match &self.complete {
            Some(_) => export_tid(g.stream_id) + joined.lane * LANE_TID,
            None => export_tid(g.stream_id),
        };
        let ts = rel_us(g.start_ns, self.base_ns);
        let dur = dur_us(g.start_ns, g.end_ns);
        let args = gpu_args(g);
        let kineto = self
            .complete
            .as_ref()
            .map(|c| kineto_args(c, g, joined.cpu_op))
            .unwrap_or_default();
        let name = self.complete.as_ref().and_then(|_| kineto_name(g));
        ObjectWriter::new(sink.element())
            .str("ph", "X")
            .str("cat", g.kind.cat())
            .str("name", name.as_deref().unwrap_or(&g.name))
            .int("pid", g.device_id)
            .int("tid", tid)
            .float("ts", ts)
            .float("dur", dur)
            .with("args", |b| {
                let mut w = ObjectWriter::new(b);
                for (key, value) in &kineto {
                    match value {
                        KinetoArg::Int(v) => w.int(key, *v),
                        KinetoArg::Raw(text) => {
                            w.with(key, |b| b.extend_from_slice(text.as_bytes()))
                        }
                        KinetoArg::Str(text) => w.str(key, text),
                        KinetoArg::Ints(v) => w.with(key, |b| {
                            b.extend_from_slice(
                                format!("[{}, {}, {}]", v[0], v[1], v[2]).as_bytes(),
                            )
                        }),
                    };
                }
                for (key, value) in &args {
                    // Kineto's arg of the same name, written first, stands.
                    if kineto.iter().any(|(k, _)| k == key) {
                        continue;
                    }
                    match value {
                        ArgValue::Int(v) => w.int(key, *v),
                        ArgValue::Str(s) => w.str(key, s),
                        ArgValue::Json(v) => w.any_key_value(key, v),
                    };
                }
                w.end();
            })
            .end();
        range.add(ts, dur);
        if g.correlation_id != 0 {
            flow(
                sink,
                FlowEnd::Finish,
                g.correlation_id,
                g.device_id,
                tid,
                ts,
            );
        }
    }

    pub(super) fn write_overhead<W: Write>(
        &self,
        sink: &mut EventSink<W>,
        o: &OverheadEvent,
        range: &mut TimeRange,
    ) -> Result<(), TraceError> {
        if self.is_trailing(o)? {
            return Ok(());
        }
        let name = o.name.get().map_err(raise)?;
        let start = o.start_ns.get().map_err(raise)?;
        let end = o.end_ns.get().map_err(raise)?;
        let ts = rel_us(start, self.base_ns);
        let dur = dur_us(start, end);
        ObjectWriter::new(sink.element())
            .str("ph", "X")
            .str("cat", "overhead")
            .str("name", &name)
            .int("pid", OVERHEAD_PID)
            .int("tid", 0)
            .float("ts", ts)
            .float("dur", dur)
            .with("args", |b| b.extend_from_slice(b"{}"))
            .end();
        range.add(ts, dur);
        Ok(())
    }
}

/// The two ends of an `ac2g` arrow: the launch (`s`) and the GPU work (`f`).
#[derive(Clone, Copy)]
enum FlowEnd {
    Start,
    Finish,
}

fn flow<W: Write>(sink: &mut EventSink<W>, end: FlowEnd, id: i128, pid: i128, tid: i128, ts: f64) {
    let mut w = ObjectWriter::new(sink.element());
    w.str(
        "ph",
        if matches!(end, FlowEnd::Start) {
            "s"
        } else {
            "f"
        },
    )
    .int("id", id)
    .int("pid", pid)
    .int("tid", tid)
    .float("ts", ts)
    .str("cat", FLOW_CATEGORY)
    .str("name", FLOW_CATEGORY);
    if matches!(end, FlowEnd::Finish) {
        w.str("bp", "e");
    }
    w.end();
}
