//! NVTX ranges and marks on their CPU threads (the window's `cpu_annotations`), in a
//! complete trace: a range is a `user_annotation` slice on the thread's track, as
//! Kineto draws `record_function`; a mark is a thread-scoped instant (`nvtx_mark`).
//! Args: the range's `External id` (the same as its `gpu_user_annotation` spans'),
//! its domain (other than NVTX's default), category and color, and flags for a range
//! drawn from the window's start or to its end because it was open there.
//!
//! Slices on one track must nest (Perfetto misplaces or drops those that do not).
//! NVTX ranges closed out of order (a domain's range ending while another domain's,
//! opened after it, is still open) overlap without nesting: such a range goes to a
//! track of its own beside its thread's ([`overlap_track`]), flagged `Not nested`.
//!
//! PyTorch's merge knows nothing of them: `--exact` writes none, and the GPU spans
//! keep exactly its args there.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::{dur_us, export_tid, rel_us, Entries, EventState};
use crate::event::{ArgValue, EventSink, Id, Phase, Scope, TraceEvent};
use crate::{CpuAnnotation, CpuAnnotationKind, TraceError};

/// Kineto's category of `record_function` ranges on CPU threads.
const RANGE_CAT: &str = "user_annotation";
const MARK_CAT: &str = "nvtx_mark";
const TRUE: ArgValue<'static> = ArgValue::Json("true");

/// A range's or mark's attributes as args (domain, category, color), after `first`.
fn attribute_args<'a>(
    a: &'a CpuAnnotation,
    first: Option<(&'a str, ArgValue<'a>)>,
) -> Vec<(&'a str, ArgValue<'a>)> {
    let mut args = Vec::with_capacity(6);
    args.extend(first);
    if let Some(d) = &a.domain {
        args.push(("Domain", ArgValue::Str(d)));
    }
    if let Some(c) = &a.category {
        args.push(("Category", ArgValue::Str(c)));
    }
    if let Some(c) = &a.color {
        args.push(("Color", ArgValue::Str(c)));
    }
    args
}

impl Entries<'_> {
    /// The ranges by their CUSTOM1 id, for the args of their GPU spans (complete
    /// traces only).
    pub(super) fn ranges_by_external_id(&self) -> FxHashMap<i128, &CpuAnnotation> {
        if self.complete.is_none() {
            return FxHashMap::default();
        }
        self.cpu_annotations
            .iter()
            .filter_map(|a| Some((i128::from(a.external_id?), a)))
            .collect()
    }

    /// The args of the GPU span of annotation `external_id`: PyTorch's merge's, then
    /// in a complete trace the NVTX range's attributes.
    pub(super) fn span_args<'a>(
        ranges: &FxHashMap<i128, &'a CpuAnnotation>,
        external_id: i128,
    ) -> Vec<(&'a str, ArgValue<'a>)> {
        let first = Some(("External id", ArgValue::Int(external_id)));
        match ranges.get(&external_id) {
            Some(a) => attribute_args(a, first),
            None => first.into_iter().collect(),
        }
    }

    /// Every range and mark of the window on its thread (complete traces only).
    pub(super) fn write_cpu_annotations(
        &self,
        sink: &mut dyn EventSink,
        state: &mut EventState,
    ) -> Result<(), TraceError> {
        if self.complete.is_none() {
            return Ok(());
        }
        let nested = nesting(self.cpu_annotations);
        let mut named_tracks = rustc_hash::FxHashSet::default();
        for (a, nests) in self.cpu_annotations.iter().zip(nested) {
            let pid = Id::Int(i128::from(a.process_id));
            let thread = export_tid(i128::from(a.thread_id));
            let tid = if nests {
                Id::Int(thread)
            } else {
                let track = overlap_track(thread);
                if named_tracks.insert((a.process_id, thread)) {
                    name_track(sink, &pid, &track)?;
                }
                Id::Text(Cow::Owned(track))
            };
            let ts = rel_us(i128::from(a.start_ns), self.base_ns);
            match a.kind {
                CpuAnnotationKind::Range => {
                    let dur = dur_us(i128::from(a.start_ns), i128::from(a.end_ns));
                    let id = a
                        .external_id
                        .map(|i| ("External id", ArgValue::Int(i.into())));
                    let mut args = attribute_args(a, id);
                    if !nests {
                        args.push(("Not nested", TRUE));
                    }
                    if a.open_at_window_start {
                        args.push(("Open at window start", TRUE));
                    }
                    if a.open_at_window_end {
                        args.push(("Open at window end", TRUE));
                    }
                    let span = TraceEvent::slice(RANGE_CAT, &a.name, pid, tid, ts, dur);
                    sink.event(&span.with_args(&args))?;
                    state.range.add(ts, dur);
                }
                CpuAnnotationKind::Mark => {
                    let args = attribute_args(a, None);
                    let mark = TraceEvent {
                        name: Cow::Borrowed(&a.name),
                        cat: Cow::Borrowed(MARK_CAT),
                        pid: Some(pid),
                        tid: Some(tid),
                        ts: Some(ts),
                        scope: Scope::Thread,
                        ..TraceEvent::new(Phase::Instant)
                    };
                    if args.is_empty() {
                        sink.event(&mark)?;
                    } else {
                        sink.event(&mark.with_args(&args))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The `thread_name` of an overlap track: its own id.
fn name_track(sink: &mut dyn EventSink, pid: &Id<'_>, track: &str) -> Result<(), TraceError> {
    let args = [("name", ArgValue::Str(track))];
    let meta = TraceEvent {
        name: Cow::Borrowed("thread_name"),
        pid: Some(pid.clone()),
        tid: Some(Id::Text(Cow::Borrowed(track))),
        ts: Some(0.0),
        ..TraceEvent::new(Phase::Metadata)
    };
    sink.event(&meta.with_args(&args))?;
    Ok(())
}

/// The track of a thread's ranges that overlap its others without nesting.
fn overlap_track(tid: i128) -> String {
    format!("{tid} (NVTX ranges not nested)")
}

/// Whether each range nests in its thread's ranges (marks always do): walked in start
/// order (the longer first at a tie), a range nests when it ends no later than the
/// innermost range still open at its start. Those that do not are left out of the
/// thread's stack.
fn nesting(annotations: &[CpuAnnotation]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..annotations.len()).collect();
    order.sort_by_key(|&i| {
        let a = &annotations[i];
        (
            a.process_id,
            a.thread_id,
            a.start_ns,
            std::cmp::Reverse(a.end_ns),
        )
    });
    let mut nests = vec![true; annotations.len()];
    let mut stack: Vec<u64> = Vec::new();
    let mut thread = None;
    for i in order {
        let a = &annotations[i];
        if a.kind != CpuAnnotationKind::Range {
            continue;
        }
        if thread != Some((a.process_id, a.thread_id)) {
            thread = Some((a.process_id, a.thread_id));
            stack.clear();
        }
        while stack.last().is_some_and(|&end| end <= a.start_ns) {
            stack.pop();
        }
        if stack.last().is_some_and(|&end| a.end_ns > end) {
            nests[i] = false;
        } else {
            stack.push(a.end_ns);
        }
    }
    nests
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start_ns: u64, end_ns: u64) -> CpuAnnotation {
        CpuAnnotation {
            kind: CpuAnnotationKind::Range,
            name: String::new(),
            process_id: 1,
            thread_id: 2,
            start_ns,
            end_ns,
            depth: 0,
            domain: None,
            category: None,
            color: None,
            external_id: None,
            open_at_window_start: false,
            open_at_window_end: false,
        }
    }

    #[test]
    fn ranges_closed_out_of_order_do_not_nest() {
        // outer 0..10 holds a 1..5 and b 6..10; c 8..20 overlaps outer and b.
        let ranges = [
            range(0, 10),
            range(1, 5),
            range(6, 10),
            range(8, 20),
            range(20, 30),
        ];
        assert_eq!(nesting(&ranges), [true, true, true, false, true]);
        let mut other = range(8, 20);
        other.thread_id = 3;
        assert_eq!(nesting(&[range(0, 10), other]), [true, true]);
    }
}
