//! The window's part of a merged trace, rule for rule as the seed's
//! `_trace_window_entries` and `_gpu_user_annotation_events` build it:
//! metadata events (inserted after the CPU trace's leading `M` events) and
//! trace events (appended after the CPU events).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use std::io::Write;

use super::args::{gpu_args, ArgValue};
use super::complete::{kineto_args, kineto_name, Complete, KinetoArg, LANE_TID};
use super::sink::EventSink;
use super::span::{py_max, TimeRange};
use super::survey::Survey;
use super::untimed::{is_untimed, UntimedGpuOps};
use super::window_input::{ApiEvent, GpuEvent, Lazy, MergeEvent, MergeWindow, OverheadEvent};
use crate::json::write::ObjectWriter;
use crate::TraceError;

const FLOW_CATEGORY: &str = "ac2g";
const OVERHEAD_PID: i128 = -1;
/// CUPTI's CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1: user annotations.
const USER_EXTERNAL_CORRELATION_KIND: i128 = 4;

/// The window, prepared against one CPU trace and base time. The events themselves
/// come from memory ([`Entries::write_events`]) or one by one from a dump
/// ([`Entries::write_event`], with the joins a streamed decode makes).
#[derive(Debug)]
pub(crate) struct Entries<'w> {
    /// The events, when the window is in memory.
    events: &'w [MergeEvent],
    annotations: &'w FxHashMap<i128, Option<String>>,
    thread_resource_map: &'w FxHashMap<i128, FxHashMap<i128, i128>>,
    base_ns: i128,
    thread_by_correlation: FxHashMap<i128, (i128, i128)>,
    survey: Survey,
    /// The complete trace's extras; `None` for PyTorch's output exactly.
    complete: Option<Complete>,
}

/// What writing the events carries from one to the next.
#[derive(Debug)]
pub(crate) struct EventState {
    pub range: TimeRange,
    extras: super::chrome_out::ChromeOut,
    /// (external id, device, stream) -> (first start, last end) of annotated GPU work.
    spans: BTreeMap<(i128, i128, i128), (i128, i128)>,
    /// GPU ops without a time, left out of a complete trace (`untimed.rs`).
    pub untimed: UntimedGpuOps,
}

/// What writing a window's events gives back for the rest of the trace.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventsWritten {
    pub range: TimeRange,
    pub untimed: UntimedGpuOps,
}

impl From<EventState> for EventsWritten {
    fn from(state: EventState) -> Self {
        Self {
            range: state.range,
            untimed: state.untimed,
        }
    }
}

/// What a streamed decode joined to one event: the CPU op's External id of its
/// correlation id, its overlap lane (GPU work), its CUSTOM1 annotation's id.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Joined {
    pub cpu_op: Option<i128>,
    pub lane: i128,
    pub annotation: Option<i128>,
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
        let mut entries = Self::without_events(window, base_ns, Survey::default(), complete);
        entries.events = &window.events;
        let thread_by_correlation = &mut entries.thread_by_correlation;
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
        let mut survey = Survey::default();
        let complete = entries.complete.is_some();
        for event in &window.events {
            survey.add(event, |a| entries.thread_id(a), complete);
        }
        entries.survey = survey;
        entries
    }

    /// For events given one by one ([`Entries::write_event`]), `survey` made over
    /// them beforehand; `window` gives the rest (annotations, thread map). No CPU
    /// ops to link API calls to (an exported trace).
    pub fn without_events(
        window: &'w MergeWindow,
        base_ns: i128,
        survey: Survey,
        complete: Option<Complete>,
    ) -> Self {
        Self {
            events: &[],
            annotations: &window.user_annotations,
            thread_resource_map: &window.thread_resource_map,
            base_ns,
            thread_by_correlation: FxHashMap::default(),
            survey,
            complete,
        }
    }

    pub fn new_state(&self) -> EventState {
        EventState {
            range: TimeRange::default(),
            extras: super::chrome_out::ChromeOut::new(self.base_ns),
            spans: BTreeMap::new(),
            untimed: UntimedGpuOps::default(),
        }
    }

    /// Whether annotation spans are looked for (the window names annotations).
    pub fn has_annotations(&self) -> bool {
        !self.annotations.is_empty()
    }

    /// Whether `external_id` is a CUSTOM1 id the window names.
    pub fn names_annotation(&self, external_id: i128) -> bool {
        self.annotations.contains_key(&external_id)
    }

    /// `_runtime_thread_id`: the CPU op's thread when the call is correlated to
    /// one in the same process, else the resource map's OS thread, else the
    /// record's thread id as an int32.
    pub fn thread_id(&self, api: &ApiEvent) -> i128 {
        if let Some(&(pid, tid)) = self.thread_by_correlation.get(&api.correlation_id) {
            if pid == api.process_id {
                return tid;
            }
        }
        let normalized = i128::from((api.thread_id as u128 & 0xFFFF_FFFF) as u32 as i32);
        self.thread_resource_map
            .get(&api.process_id)
            .and_then(|m| m.get(&normalized))
            .copied()
            .unwrap_or(normalized)
    }

    /// `_is_trailing_buffer_request`.
    fn is_trailing(&self, o: &OverheadEvent) -> Result<bool, TraceError> {
        let max = self.survey.max_non_overhead_end_ns;
        if !(o.is_buffer_request && max > 0) {
            return Ok(false);
        }
        let start = o.start_ns_get.get().map_err(raise)?;
        Ok(start > max)
    }

    /// The metadata events, written into `sink`.
    pub fn write_metadata<W: Write>(&self, sink: &mut EventSink<W>) -> Result<(), TraceError> {
        let need_overhead = self.survey.need_overhead()?;
        let Survey {
            devices,
            streams,
            processes,
            threads,
            ..
        } = &self.survey;
        let base = self.base_ns;
        for (&did, &first) in devices {
            let label = Meta::Owned(format!("GPU {did}"));
            process_meta(sink, rel_us(first, base), did, label, 5_000_000 + did);
        }
        for (&pid, &first) in processes {
            process_meta(sink, rel_us(first, base), pid, Meta::Str("CPU"), pid);
        }
        for &(pid, tid) in threads {
            thread_meta(sink, pid, tid, Meta::Owned(format!("thread {tid}")), tid);
        }
        for &(did, rid) in streams {
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
    /// spans) of the window in memory, written into `sink`; returns their time range
    /// and the untimed GPU ops left out.
    pub fn write_events<W: Write>(
        &self,
        sink: &mut EventSink<W>,
    ) -> Result<EventsWritten, TraceError> {
        let mut state = self.new_state();
        for (index, event) in self.events.iter().enumerate() {
            let joined = match &self.complete {
                Some(c) => Joined {
                    cpu_op: c.external_id(event_correlation(event)),
                    lane: c.lane(index),
                    annotation: None,
                },
                None => Joined::default(),
            };
            self.write_event(sink, event, joined, &mut state)?;
        }
        self.add_user_annotation_spans(&mut state)?;
        self.write_spans(sink, &mut state)?;
        Ok(state.into())
    }

    /// Write one event (API call, GPU work, overhead, a complete trace's extra kind)
    /// with what was joined to it; GPU work under an annotation counts for its span.
    /// A complete trace leaves out (and counts) GPU work without a time.
    pub fn write_event<W: Write>(
        &self,
        sink: &mut EventSink<W>,
        event: &MergeEvent,
        joined: Joined,
        state: &mut EventState,
    ) -> Result<(), TraceError> {
        let range = &mut state.range;
        let complete = self.complete.is_some();
        match event {
            MergeEvent::Api(a) => self.write_api(sink, a, joined.cpu_op, range),
            MergeEvent::Gpu(g) if complete && state.untimed.take_gpu(g) => {}
            MergeEvent::Gpu(g) => {
                self.write_gpu(sink, g, joined, range);
                if let Some(external_id) = joined.annotation {
                    add_span(&mut state.spans, external_id, g);
                }
            }
            MergeEvent::Overhead(o) => self.write_overhead(sink, o, range)?,
            MergeEvent::Extra(e) if complete && state.untimed.take_extra(e) => {
                state.extras.account(e)
            }
            MergeEvent::Extra(e) if complete => state.extras.write(sink, e),
            MergeEvent::ExternalCorrelation(_)
            | MergeEvent::Other { .. }
            | MergeEvent::Extra(_) => {}
        }
        sink.maybe_flush()?;
        Ok(())
    }

    fn write_api<W: Write>(
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
        if a.correlation_id != 0 && crate::api_rules::requires_flow(a.domain, &name) {
            flow(sink, FlowEnd::Start, a.correlation_id, pid, tid, ts);
        }
    }

    fn write_gpu<W: Write>(
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

    /// `_gpu_user_annotation_events` over the window in memory: the spans of the
    /// GPU work launched under a CUSTOM1 annotation, into `state`.
    fn add_user_annotation_spans(&self, state: &mut EventState) -> Result<(), TraceError> {
        let annotations = self.annotations;
        if annotations.is_empty() {
            return Ok(());
        }
        let mut user_external_by_correlation: FxHashMap<i128, i128> = FxHashMap::default();
        for event in self.events {
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
        let complete = self.complete.is_some();
        for event in self.events {
            let MergeEvent::Gpu(g) = event else { continue };
            if complete && is_untimed(g) {
                continue;
            }
            let Some(&external_id) = user_external_by_correlation.get(&g.correlation_id) else {
                continue;
            };
            add_span(&mut state.spans, external_id, g);
        }
        Ok(())
    }

    /// One `gpu_user_annotation` span per (annotation, device, stream), in that order,
    /// covering the GPU work launched under it.
    pub fn write_spans<W: Write>(
        &self,
        sink: &mut EventSink<W>,
        state: &mut EventState,
    ) -> Result<(), TraceError> {
        let annotations = self.annotations;
        for (&(external_id, device_id, stream_id), &(start, end)) in &state.spans {
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
            state.range.add(ts, dur);
            sink.maybe_flush()?;
        }
        Ok(())
    }
}

/// The CUSTOM1 kind: user annotations.
pub(crate) const USER_ANNOTATION_KIND: i128 = USER_EXTERNAL_CORRELATION_KIND;

fn add_span(
    spans: &mut BTreeMap<(i128, i128, i128), (i128, i128)>,
    external_id: i128,
    g: &GpuEvent,
) {
    spans
        .entry((external_id, g.device_id, g.stream_id))
        .and_modify(|s| {
            s.0 = s.0.min(g.start_ns);
            s.1 = s.1.max(g.end_ns);
        })
        .or_insert((g.start_ns, g.end_ns));
}

/// The correlation id an event's joins go by (API calls and GPU work).
fn event_correlation(event: &MergeEvent) -> i128 {
    match event {
        MergeEvent::Api(a) => a.correlation_id,
        MergeEvent::Gpu(g) => g.correlation_id,
        _ => 0,
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
