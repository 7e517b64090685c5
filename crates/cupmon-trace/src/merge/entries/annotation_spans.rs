//! `gpu_user_annotation` spans: for each CUSTOM1 annotation, device and stream, one
//! span over the GPU work launched under it (PyTorch's merge's `_gpu_user_annotation_events`).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::{export_tid, raise, Entries, EventState};
use crate::event::{EventSink, Id, TraceEvent};
use crate::merge::span::py_max;
use crate::merge::untimed::is_untimed;
use crate::merge::window_input::{GpuEvent, Lazy, MergeEvent};
use crate::TraceError;

/// CUPTI's CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1: user annotations.
const USER_EXTERNAL_CORRELATION_KIND: i128 = 4;

impl Entries<'_> {
    /// `_gpu_user_annotation_events` over the window in memory: the spans of the
    /// GPU work launched under a CUSTOM1 annotation, into `state`.
    pub(super) fn add_user_annotation_spans(
        &self,
        state: &mut EventState,
    ) -> Result<(), TraceError> {
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
    pub fn write_spans(
        &self,
        sink: &mut dyn EventSink,
        state: &mut EventState,
    ) -> Result<(), TraceError> {
        let annotations = self.annotations;
        let ranges = self.ranges_by_external_id();
        for (&(external_id, device_id, stream_id), &(start, end)) in &state.spans {
            let Some(Some(name)) = annotations.get(&external_id) else {
                continue;
            };
            let ts = py_max((start - self.base_ns) as f64 / 1000.0 - 0.001, 0.0);
            let dur = py_max((end - start) as f64 / 1000.0 + 0.002, 0.0);
            let args = Self::span_args(&ranges, external_id);
            let span = TraceEvent::slice(
                USER_ANNOTATION_CAT,
                name,
                Id::Int(device_id),
                Id::Int(export_tid(stream_id)),
                ts,
                dur,
            );
            sink.event(&span.with_args(&args))?;
            state.range.add(ts, dur);
        }
        self.write_cpu_annotations(sink, state)
    }
}

const USER_ANNOTATION_CAT: &str = "gpu_user_annotation";

/// The CUSTOM1 kind: user annotations.
pub(crate) const USER_ANNOTATION_KIND: i128 = USER_EXTERNAL_CORRELATION_KIND;

pub(super) fn add_span(
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
