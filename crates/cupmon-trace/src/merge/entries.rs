//! The window's part of a merged trace, rule for rule as the seed's
//! `_trace_window_entries` and `_gpu_user_annotation_events` build it:
//! metadata events (inserted after the CPU trace's leading `M` events) and
//! trace events (appended after the CPU events).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;
use std::io::Write;

use super::args::{gpu_args, ArgValue};
use super::complete::{kineto_args, kineto_name, Complete, KinetoArg, LANE_TID};
use super::sink::EventSink;
use super::span::{py_max, TimeRange};
use super::window_input::{ApiEvent, GpuEvent, Lazy, MergeEvent, MergeWindow, OverheadEvent};
use crate::json::write::ObjectWriter;
use crate::TraceError;

const FLOW_CATEGORY: &str = "ac2g";
const OVERHEAD_PID: i128 = -1;
/// CUPTI's CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1: user annotations.
const USER_EXTERNAL_CORRELATION_KIND: i128 = 4;

/// The window, prepared against one CPU trace and base time.
#[derive(Debug)]
pub(crate) struct Entries<'w> {
    window: &'w MergeWindow,
    base_ns: i128,
    thread_by_correlation: FxHashMap<i128, (i128, i128)>,
    max_non_overhead_end_ns: i128,
    /// The complete trace's extras; `None` for PyTorch's output exactly.
    complete: Option<Complete>,
}

/// `_sanitize_tid` / `_export_tid` for an integer tid.
fn export_tid(tid: i128) -> i128 {
    if tid == -(1i128 << 63) {
        0
    } else {
        tid.abs()
    }
}

/// `max((t_ns - base_ns) / 1000.0, 0.0)`; Python converts the int to float first.
#[inline]
fn rel_us(t_ns: i128, base_ns: i128) -> f64 {
    py_max((t_ns - base_ns) as f64 / 1000.0, 0.0)
}

#[inline]
fn dur_us(start_ns: i128, end_ns: i128) -> f64 {
    py_max((end_ns - start_ns) as f64 / 1000.0, 0.0)
}

fn raise(msg: String) -> TraceError {
    TraceError::Window(msg)
}

impl<'w> Entries<'w> {
    pub fn new(
        window: &'w MergeWindow,
        base_ns: i128,
        thread_by_external_id: &FxHashMap<i128, (i128, i128)>,
        complete: Option<Complete>,
    ) -> Self {
        let mut thread_by_correlation = FxHashMap::default();
        for event in &window.events {
            if let MergeEvent::ExternalCorrelation(x) = event {
                if x.correlation_id == 0 {
                    continue;
                }
                if let Some(&linked) = thread_by_external_id.get(&x.external_id) {
                    thread_by_correlation.insert(x.correlation_id, linked);
                }
            }
        }
        let max_non_overhead_end_ns = window
            .events
            .iter()
            .filter_map(MergeEvent::non_overhead_end_ns)
            .fold(0, i128::max);
        Self {
            window,
            base_ns,
            thread_by_correlation,
            max_non_overhead_end_ns,
            complete,
        }
    }

    /// `_runtime_thread_id`: the CPU op's thread when the call is correlated to
    /// one in the same process, else the resource map's OS thread, else the
    /// record's thread id as an int32.
    fn thread_id(&self, api: &ApiEvent) -> i128 {
        if let Some(&(pid, tid)) = self.thread_by_correlation.get(&api.correlation_id) {
            if pid == api.process_id {
                return tid;
            }
        }
        let normalized = i128::from((api.thread_id as u128 & 0xFFFF_FFFF) as u32 as i32);
        self.window
            .thread_resource_map
            .get(&api.process_id)
            .and_then(|m| m.get(&normalized))
            .copied()
            .unwrap_or(normalized)
    }

    /// `_is_trailing_buffer_request`.
    fn is_trailing(&self, o: &OverheadEvent) -> Result<bool, TraceError> {
        if !(o.is_buffer_request && self.max_non_overhead_end_ns > 0) {
            return Ok(false);
        }
        let start = o.start_ns_get.get().map_err(raise)?;
        Ok(start > self.max_non_overhead_end_ns)
    }

    /// The metadata events, written into `sink`.
    pub fn write_metadata<W: Write>(&self, sink: &mut EventSink<W>) -> Result<(), TraceError> {
        let mut devices: BTreeMap<i128, i128> = BTreeMap::new();
        let mut streams: BTreeSet<(i128, i128)> = BTreeSet::new();
        let mut processes: BTreeMap<i128, i128> = BTreeMap::new();
        let mut threads: BTreeSet<(i128, i128)> = BTreeSet::new();
        let mut need_overhead = false;
        for event in &self.window.events {
            match event {
                MergeEvent::Gpu(g) => {
                    devices.entry(g.device_id).or_insert(g.start_ns);
                    streams.insert((g.device_id, g.stream_id));
                }
                MergeEvent::Api(a) if a.registered => {
                    processes.entry(a.process_id).or_insert(a.start_ns);
                    threads.insert((a.process_id, self.thread_id(a)));
                }
                MergeEvent::Overhead(o) if !self.is_trailing(o)? => need_overhead = true,
                MergeEvent::Extra(e) if self.complete.is_some() => {
                    if let Some(d) = extra_device(e) {
                        devices.entry(d).or_insert(i128::from(e.start_ns()));
                    }
                }
                _ => {}
            }
        }
        let base = self.base_ns;
        for (&did, &first) in &devices {
            let label = Meta::Owned(format!("GPU {did}"));
            process_meta(sink, rel_us(first, base), did, label, 5_000_000 + did);
        }
        for (&pid, &first) in &processes {
            process_meta(sink, rel_us(first, base), pid, Meta::Str("CPU"), pid);
        }
        for &(pid, tid) in &threads {
            thread_meta(sink, pid, tid, Meta::Owned(format!("thread {tid}")), tid);
        }
        for &(did, rid) in &streams {
            thread_meta(sink, did, rid, Meta::Owned(format!("stream {rid} ")), rid);
        }
        for &(did, rid, lane) in self.complete.iter().flat_map(|c| &c.overlap_tracks) {
            let tid = export_tid(rid) + lane * LANE_TID;
            let name = if lane == 1 {
                format!("stream {rid} (overlap)")
            } else {
                format!("stream {rid} (overlap {lane})")
            };
            thread_meta(sink, did, tid, Meta::Owned(name), tid);
        }
        if need_overhead {
            let p = OVERHEAD_PID;
            process_meta(sink, 0.0, p, Meta::Str("Overhead"), 0x100_0000);
            thread_meta(sink, p, 0, Meta::Str("thread 0"), 0);
        }
        sink.maybe_flush()?;
        Ok(())
    }

    /// The trace events (API calls, GPU work, overhead, flows, annotation
    /// spans), written into `sink`; returns their time range.
    pub fn write_events<W: Write>(&self, sink: &mut EventSink<W>) -> Result<TimeRange, TraceError> {
        let mut range = TimeRange::default();
        let mut extras = super::chrome_out::ChromeOut::new(self.base_ns);
        for (index, event) in self.window.events.iter().enumerate() {
            match event {
                MergeEvent::Api(a) => self.write_api(sink, a, &mut range),
                MergeEvent::Gpu(g) => self.write_gpu(sink, index, g, &mut range),
                MergeEvent::Overhead(o) => self.write_overhead(sink, o, &mut range)?,
                MergeEvent::Extra(e) if self.complete.is_some() => extras.write(sink, e),
                MergeEvent::ExternalCorrelation(_)
                | MergeEvent::Other { .. }
                | MergeEvent::Extra(_) => {}
            }
            sink.maybe_flush()?;
        }
        self.write_user_annotations(sink, &mut range)?;
        Ok(range)
    }

    fn write_api<W: Write>(&self, sink: &mut EventSink<W>, a: &ApiEvent, range: &mut TimeRange) {
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
                if let Some(id) = self
                    .complete
                    .as_ref()
                    .and_then(|c| c.external_id(a.correlation_id))
                {
                    w.int("External id", id);
                }
                w.int("cbid", a.cbid)
                    .int("correlation", a.correlation_id)
                    .end();
            })
            .end();
        range.add(ts, dur);
        if a.correlation_id != 0 && crate::api_rules::requires_flow(a.domain, &name) {
            flow(sink, FlowEnd::Start, a.correlation_id, pid, tid, ts);
        }
    }

    fn write_gpu<W: Write>(
        &self,
        sink: &mut EventSink<W>,
        index: usize,
        g: &GpuEvent,
        range: &mut TimeRange,
    ) {
        let tid = match &self.complete {
            Some(c) => c.gpu_tid(index, export_tid(g.stream_id)),
            None => export_tid(g.stream_id),
        };
        let ts = rel_us(g.start_ns, self.base_ns);
        let dur = dur_us(g.start_ns, g.end_ns);
        let args = gpu_args(g);
        let kineto = self
            .complete
            .as_ref()
            .map(|c| kineto_args(c, g))
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

    fn write_overhead<W: Write>(
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

    /// `_gpu_user_annotation_events`: one span per (annotation, device, stream)
    /// covering the GPU work launched under a CUSTOM1 annotation.
    fn write_user_annotations<W: Write>(
        &self,
        sink: &mut EventSink<W>,
        range: &mut TimeRange,
    ) -> Result<(), TraceError> {
        let annotations = &self.window.user_annotations;
        if annotations.is_empty() {
            return Ok(());
        }
        let mut user_external_by_correlation: FxHashMap<i128, i128> = FxHashMap::default();
        for event in &self.window.events {
            let MergeEvent::ExternalCorrelation(x) = event else {
                continue;
            };
            let kind = match &x.external_kind {
                Lazy::Value(k) => *k,
                other => other.get().map_err(raise)?,
            };
            if kind != USER_EXTERNAL_CORRELATION_KIND {
                continue;
            }
            if annotations.contains_key(&x.external_id) && x.correlation_id != 0 {
                user_external_by_correlation.insert(x.correlation_id, x.external_id);
            }
        }
        if user_external_by_correlation.is_empty() {
            return Ok(());
        }
        let mut spans: BTreeMap<(i128, i128, i128), (i128, i128)> = BTreeMap::new();
        for event in &self.window.events {
            let MergeEvent::Gpu(g) = event else { continue };
            let Some(&external_id) = user_external_by_correlation.get(&g.correlation_id) else {
                continue;
            };
            spans
                .entry((external_id, g.device_id, g.stream_id))
                .and_modify(|s| {
                    s.0 = s.0.min(g.start_ns);
                    s.1 = s.1.max(g.end_ns);
                })
                .or_insert((g.start_ns, g.end_ns));
        }
        for (&(external_id, device_id, stream_id), &(start, end)) in &spans {
            let Some(Some(name)) = annotations.get(&external_id) else {
                continue;
            };
            let ts = py_max((start - self.base_ns) as f64 / 1000.0 - 0.001, 0.0);
            let dur = py_max((end - start) as f64 / 1000.0 + 0.002, 0.0);
            ObjectWriter::new(sink.element())
                .str("ph", "X")
                .str("cat", "gpu_user_annotation")
                .str("name", name)
                .int("pid", device_id)
                .int("tid", export_tid(stream_id))
                .float("ts", ts)
                .float("dur", dur)
                .with("args", |b| {
                    ObjectWriter::new(b).int("External id", external_id).end();
                })
                .end();
            range.add(ts, dur);
            sink.maybe_flush()?;
        }
        Ok(())
    }
}

/// The device of a kind that PyTorch's merge does not know.
fn extra_device(e: &crate::WindowEvent) -> Option<i128> {
    match e {
        crate::WindowEvent::Memory(m) => Some(m.device_id.into()),
        crate::WindowEvent::MemoryPool(p) => Some(p.device_id.into()),
        _ => None,
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

enum Meta<'a> {
    Str(&'a str),
    Owned(String),
    Int(i128),
}

/// `_metadata_event`.
/// A process's name ("python"), label and sort index, as the seed writes them.
fn process_meta<W: Write>(
    sink: &mut EventSink<W>,
    ts: f64,
    pid: i128,
    label: Meta<'_>,
    sort: i128,
) {
    meta(
        sink,
        "process_name",
        ts,
        pid,
        0,
        "name",
        Meta::Str("python"),
    );
    meta(sink, "process_labels", ts, pid, 0, "labels", label);
    meta(
        sink,
        "process_sort_index",
        ts,
        pid,
        0,
        "sort_index",
        Meta::Int(sort),
    );
}

/// A thread's (or stream's) name and sort index, at ts 0 as the seed writes them.
fn thread_meta<W: Write>(
    sink: &mut EventSink<W>,
    pid: i128,
    tid: i128,
    name: Meta<'_>,
    sort: i128,
) {
    meta(sink, "thread_name", 0.0, pid, tid, "name", name);
    meta(
        sink,
        "thread_sort_index",
        0.0,
        pid,
        tid,
        "sort_index",
        Meta::Int(sort),
    );
}

fn meta<W: Write>(
    sink: &mut EventSink<W>,
    name: &str,
    ts: f64,
    pid: i128,
    tid: i128,
    arg_key: &str,
    arg: Meta<'_>,
) {
    ObjectWriter::new(sink.element())
        .str("ph", "M")
        .str("name", name)
        .float("ts", ts)
        .int("pid", pid)
        .int("tid", export_tid(tid))
        .with("args", |b| {
            let mut w = ObjectWriter::new(b);
            match arg {
                Meta::Str(s) => w.str(arg_key, s),
                Meta::Owned(s) => w.str(arg_key, &s),
                Meta::Int(i) => w.int(arg_key, i),
            };
            w.end();
        })
        .end();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tids_are_sanitised_like_the_seed() {
        assert_eq!(export_tid(-5), 5);
        assert_eq!(export_tid(-(1i128 << 63)), 0);
        assert_eq!(export_tid(7), 7);
    }

    #[test]
    fn relative_times_clamp_at_zero() {
        assert_eq!(rel_us(1_500, 1_000), 0.5);
        assert_eq!(rel_us(500, 1_000), 0.0);
        assert_eq!(dur_us(10, 5), 0.0);
    }
}
