//! What the merge must know of a whole window before it writes the first event: the
//! metadata events' devices, streams, processes and threads (of the events it shows), whether the overhead
//! track is needed, the latest non-overhead end (for PyTorch's merge's trailing "Activity
//! Buffer Request" rule) and the first start (an exported trace's base time). One
//! pass over the events in window order gathers it, from memory or from a dump.

use std::collections::{BTreeMap, BTreeSet};

use super::untimed::{is_untimed, is_untimed_extra};
use super::window_input::{ApiEvent, Lazy, MergeEvent};
use crate::json::value::PyRaise;
use crate::TraceError;

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Survey {
    pub events: usize,
    /// The earliest non-zero start of GPU and API events.
    pub first_start_ns: Option<i128>,
    /// `max(_as_int(event.get("end_ns", 0)))` over events not of kind "overhead", from 0.
    pub max_non_overhead_end_ns: i128,
    /// Device -> start of its first event (in window order).
    pub devices: BTreeMap<i128, i128>,
    pub streams: BTreeSet<(i128, i128)>,
    /// pid -> start of its first registered API call.
    pub processes: BTreeMap<i128, i128>,
    pub threads: BTreeSet<(i128, i128)>,
    /// An overhead event that is not an "Activity Buffer Request".
    plain_overhead: bool,
    /// The earliest start of the "Activity Buffer Request" overheads.
    buffer_request_start: Option<i128>,
    /// The first such overhead whose start PyTorch's merge cannot read.
    buffer_request_error: Option<PyRaise>,
}

impl Survey {
    /// Add the next event. `thread_id` is the merge's thread of an API call;
    /// `complete`: the complete trace (its extra kinds have devices too).
    pub fn add(
        &mut self,
        event: &MergeEvent,
        thread_id: impl Fn(&ApiEvent) -> i128,
        complete: bool,
    ) {
        self.events += 1;
        if let Some(end) = event.non_overhead_end_ns() {
            self.max_non_overhead_end_ns = self.max_non_overhead_end_ns.max(end);
        }
        let start = match event {
            // Left out of a complete trace (`untimed.rs`): no metadata for it.
            MergeEvent::Gpu(g) if complete && is_untimed(g) => None,
            MergeEvent::Extra(e) if complete && is_untimed_extra(e) => None,
            MergeEvent::Gpu(g) => {
                self.devices.entry(g.device_id).or_insert(g.start_ns);
                self.streams.insert((g.device_id, g.stream_id));
                Some(g.start_ns)
            }
            MergeEvent::Api(a) => {
                if a.registered {
                    self.processes.entry(a.process_id).or_insert(a.start_ns);
                    self.threads.insert((a.process_id, thread_id(a)));
                }
                Some(a.start_ns)
            }
            MergeEvent::Overhead(o) if o.is_buffer_request => {
                match &o.start_ns_get {
                    Lazy::Value(s) => {
                        let first = self.buffer_request_start.get_or_insert(*s);
                        *first = (*first).min(*s);
                    }
                    other => {
                        if self.buffer_request_error.is_none() {
                            self.buffer_request_error = other.get().err();
                        }
                    }
                }
                None
            }
            MergeEvent::Overhead(_) => {
                self.plain_overhead = true;
                None
            }
            MergeEvent::Extra(e) if complete => {
                if let Some(d) = e.device_id() {
                    let first = i128::from(e.start_ns());
                    self.devices.entry(d.into()).or_insert(first);
                }
                None
            }
            _ => None,
        };
        if let Some(t) = start.filter(|&t| t > 0) {
            let first = self.first_start_ns.get_or_insert(t);
            *first = (*first).min(t);
        }
    }

    /// Whether an overhead event is shown (one that is not the trailing buffer
    /// request); PyTorch's merge's error when it must read a start it cannot.
    pub fn need_overhead(&self) -> Result<bool, TraceError> {
        let max = self.max_non_overhead_end_ns;
        if max > 0 {
            if let Some(why) = &self.buffer_request_error {
                return Err(TraceError::Window(why.clone()));
            }
        }
        let shown_request = self
            .buffer_request_start
            .is_some_and(|start| max <= 0 || start <= max);
        Ok(self.plain_overhead || shown_request)
    }
}
