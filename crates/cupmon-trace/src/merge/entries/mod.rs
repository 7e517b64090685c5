//! The window's part of a merged trace, rule for rule as PyTorch's merge's
//! `_trace_window_entries` and `_gpu_user_annotation_events` build it:
//! metadata events (inserted after the CPU trace's leading `M` events, `metadata.rs`)
//! and trace events (appended after the CPU events: calls, GPU ops and overhead with
//! their arrows in `op_events.rs`, the annotations' GPU spans in `annotation_spans.rs`).
//! Here: the window prepared for writing, and the walk over its events.

mod annotation_spans;
mod cpu_annotations;
mod metadata;
mod op_events;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::complete::Complete;
use super::span::{py_max, TimeRange};
use super::survey::Survey;
use super::untimed::UntimedGpuOps;
use super::window_input::{ApiEvent, MergeEvent, MergeWindow, OverheadEvent};
use crate::event::EventSink;
use crate::TraceError;
use annotation_spans::add_span;
pub(crate) use annotation_spans::USER_ANNOTATION_KIND;

const OVERHEAD_PID: i128 = -1;

/// The window, prepared against one CPU trace and base time. The events themselves
/// come from memory ([`Entries::write_events`]) or one by one from a dump
/// ([`Entries::write_event`], with the joins a streamed decode makes).
#[derive(Debug)]
pub(crate) struct Entries<'w> {
    /// The events, when the window is in memory.
    events: &'w [MergeEvent],
    annotations: &'w FxHashMap<i128, Option<String>>,
    thread_resource_map: &'w FxHashMap<i128, FxHashMap<i128, i128>>,
    /// NVTX ranges and marks on their threads (`cpu_annotations.rs`).
    cpu_annotations: &'w [crate::CpuAnnotation],
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
    extras: super::extra_kinds::ExtraKinds,
    /// (external id, device, stream) -> (first start, last end) of annotated GPU work.
    spans: BTreeMap<(i128, i128, i128), (i128, i128)>,
    /// GPU ops without a time, left out of a complete trace (`untimed.rs`).
    pub untimed: UntimedGpuOps,
}

/// What writing a window's events gives back for the rest of the trace.
#[derive(Debug, Clone)]
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
            cpu_annotations: &window.cpu_annotations,
            base_ns,
            thread_by_correlation: FxHashMap::default(),
            survey,
            complete,
        }
    }

    pub fn new_state(&self) -> EventState {
        EventState {
            range: TimeRange::default(),
            extras: super::extra_kinds::ExtraKinds::new(self.base_ns),
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

    /// The trace events (API calls, GPU work, overhead, flows, annotation
    /// spans) of the window in memory, written into `sink`; returns their time range
    /// and the untimed GPU ops left out.
    pub fn write_events(&self, sink: &mut dyn EventSink) -> Result<EventsWritten, TraceError> {
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
    pub fn write_event(
        &self,
        sink: &mut dyn EventSink,
        event: &MergeEvent,
        joined: Joined,
        state: &mut EventState,
    ) -> Result<(), TraceError> {
        let range = &mut state.range;
        let complete = self.complete.is_some();
        match event {
            MergeEvent::Api(a) => self.write_api(sink, a, joined.cpu_op, range)?,
            MergeEvent::Gpu(g) if complete && state.untimed.take_gpu(g) => {}
            MergeEvent::Gpu(g) => {
                self.write_gpu(sink, g, joined, range)?;
                if let Some(external_id) = joined.annotation {
                    add_span(&mut state.spans, external_id, g);
                }
            }
            MergeEvent::Overhead(o) => self.write_overhead(sink, o, range)?,
            MergeEvent::Extra(e) if complete && state.untimed.take_extra(e) => {
                state.extras.account(e)
            }
            MergeEvent::Extra(e) if complete => state.extras.write(sink, e)?,
            MergeEvent::ExternalCorrelation(_)
            | MergeEvent::Other { .. }
            | MergeEvent::Extra(_) => {}
        }
        Ok(())
    }
}

/// The correlation id an event's joins go by (API calls and GPU work).
fn event_correlation(event: &MergeEvent) -> i128 {
    match event {
        MergeEvent::Api(a) => a.correlation_id,
        MergeEvent::Gpu(g) => g.correlation_id,
        _ => 0,
    }
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
