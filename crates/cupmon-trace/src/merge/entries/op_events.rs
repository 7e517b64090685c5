//! The window's `X` events, as PyTorch's merge writes them: registered API calls, GPU ops
//! (with a complete trace's Kineto names, args and overlap lanes) and overhead, and
//! the `ac2g` arrows from a launch to its GPU op.

use std::borrow::Cow;

use super::{dur_us, export_tid, raise, rel_us, Entries, Joined, OVERHEAD_PID};
use crate::event::{ArgValue, EventSink, FlowEnd, Id, TraceEvent};
use crate::merge::args::{gpu_args, ArgValue as WindowArg};
use crate::merge::complete::{kineto_args, kineto_name, KinetoArg};
use crate::merge::lanes::lane_tid;
use crate::merge::span::TimeRange;
use crate::merge::window_input::{ApiEvent, GpuEvent, OverheadEvent};
use crate::TraceError;

impl Entries<'_> {
    pub(super) fn write_api(
        &self,
        sink: &mut dyn EventSink,
        a: &ApiEvent,
        cpu_op: Option<i128>,
        range: &mut TimeRange,
    ) -> std::io::Result<()> {
        if !a.registered {
            return Ok(());
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
        let external = cpu_op.filter(|_| self.complete.is_some());
        let ids = [
            ("External id", ArgValue::Int(external.unwrap_or(0))),
            ("cbid", ArgValue::Int(a.cbid)),
            ("correlation", ArgValue::Int(a.correlation_id)),
        ];
        let mut event = TraceEvent::slice(cat, &name, Id::Int(pid), Id::Int(tid), ts, dur)
            .with_args(&ids[usize::from(external.is_none())..]);
        let launch = a.correlation_id != 0 && crate::requires_flow(a.domain, &name);
        if launch {
            event.flow = Some((a.correlation_id, FlowEnd::Start));
        }
        range.add(ts, dur);
        sink.event(&event)?;
        // The launch's Python stack as Kineto's `python_function` events over it.
        if let Some(c) = self.complete.as_ref().filter(|_| launch) {
            for frame in c.python_frames(a.correlation_id) {
                let (pid, tid) = (Id::Int(pid), Id::Int(tid));
                sink.event(&TraceEvent::slice(
                    "python_function",
                    &frame,
                    pid,
                    tid,
                    ts,
                    dur,
                ))?;
            }
        }
        Ok(())
    }

    pub(super) fn write_gpu(
        &self,
        sink: &mut dyn EventSink,
        g: &GpuEvent,
        joined: Joined,
        range: &mut TimeRange,
    ) -> std::io::Result<()> {
        let tid = match &self.complete {
            Some(_) => lane_tid(export_tid(g.stream_id), joined.lane),
            None => export_tid(g.stream_id),
        };
        let ts = rel_us(g.start_ns, self.base_ns);
        let dur = dur_us(g.start_ns, g.end_ns);
        let window_args = gpu_args(g);
        let kineto = self
            .complete
            .as_ref()
            .map(|c| kineto_args(c, g, joined.cpu_op))
            .unwrap_or_default();
        let name = self.complete.as_ref().and_then(|_| kineto_name(g));
        let mut args: Vec<(&str, ArgValue<'_>)> = Vec::with_capacity(kineto.len() + 8);
        for (key, value) in &kineto {
            args.push((
                key,
                match value {
                    KinetoArg::Int(v) => ArgValue::Int(*v),
                    KinetoArg::Raw(text) => ArgValue::Json(text),
                    KinetoArg::Str(text) => ArgValue::Str(text),
                    KinetoArg::Ints(v) => ArgValue::Dims(*v),
                },
            ));
        }
        for (key, value) in &window_args {
            // Kineto's arg of the same name, written first, stands.
            if kineto.iter().any(|(k, _)| k == key) {
                continue;
            }
            args.push((
                key,
                match value {
                    WindowArg::Int(v) => ArgValue::Int(*v),
                    WindowArg::Str(s) => ArgValue::Str(s),
                    WindowArg::Json(v) => ArgValue::Value(v),
                },
            ));
        }
        let mut event = TraceEvent::slice(
            g.kind.cat(),
            name.as_deref().unwrap_or(&g.name),
            Id::Int(g.device_id),
            Id::Int(tid),
            ts,
            dur,
        )
        .with_args(&args);
        if g.correlation_id != 0 {
            event.flow = Some((g.correlation_id, FlowEnd::Finish));
        }
        range.add(ts, dur);
        sink.event(&event)
    }

    pub(super) fn write_overhead(
        &self,
        sink: &mut dyn EventSink,
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
        let event = TraceEvent {
            name: Cow::Owned(name),
            ..TraceEvent::slice("overhead", "", Id::Int(OVERHEAD_PID), Id::Int(0), ts, dur)
        }
        .with_args(&[]);
        sink.event(&event)?;
        range.add(ts, dur);
        Ok(())
    }
}
