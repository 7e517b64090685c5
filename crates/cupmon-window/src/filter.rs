//! Which records a trace window keeps, as PyTorch's CUPTI monitor decides.

use std::collections::HashSet;

use crate::WindowEvent;

/// Filter the records collected while a window was open, given its start `S`
/// (0 keeps everything, in arrival order). Otherwise: runtime/driver records
/// starting at or after S are kept and their correlation ids collected; GPU
/// records are kept when their correlation id was collected, or when it is 0
/// and they start at or after S; external-correlation records when their
/// correlation id was collected; any other record when it has no start time
/// or starts at or after S. Order: kept API and other records in arrival
/// order, then external correlations, then GPU records.
pub fn filter_window(events: Vec<WindowEvent>, start_ns: u64) -> Vec<WindowEvent> {
    if start_ns == 0 {
        return events;
    }
    let correlations: HashSet<u32> = events
        .iter()
        .filter(|e| e.is_api() && e.start_ns() >= start_ns)
        .map(WindowEvent::correlation_id)
        .collect();
    let mut head = Vec::new();
    let mut external = Vec::new();
    let mut gpu = Vec::new();
    for event in events {
        match &event {
            e if e.is_api() => {
                if e.start_ns() >= start_ns {
                    head.push(event);
                }
            }
            e if e.is_gpu_activity() => {
                let corr = e.correlation_id();
                if correlations.contains(&corr) || (corr == 0 && e.start_ns() >= start_ns) {
                    gpu.push(event);
                }
            }
            WindowEvent::ExternalCorrelation(x) => {
                if correlations.contains(&x.correlation_id) {
                    external.push(event);
                }
            }
            e => {
                if e.start_ns() == 0 || e.start_ns() >= start_ns {
                    head.push(event);
                }
            }
        }
    }
    head.extend(external);
    head.extend(gpu);
    head
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiEvent, ExternalCorrelationEvent};

    fn api(corr: u32, start: u64) -> WindowEvent {
        WindowEvent::Runtime(ApiEvent {
            cbid: 211,
            start_ns: start,
            end_ns: start + 1,
            process_id: 1,
            thread_id: 1,
            correlation_id: corr,
            return_value: 0,
            name: "cbid_211".into(),
            api_name: None,
        })
    }

    fn ext(corr: u32) -> WindowEvent {
        WindowEvent::ExternalCorrelation(ExternalCorrelationEvent {
            external_kind: 4,
            external_id: 9,
            correlation_id: corr,
            name: "external_correlation".into(),
        })
    }

    #[test]
    fn keeps_calls_after_start_and_what_they_correlate() {
        let events = vec![ext(1), api(1, 50), ext(2), api(2, 150)];
        let kept = filter_window(events, 100);
        assert_eq!(kept, vec![api(2, 150), ext(2)]);
    }

    #[test]
    fn start_zero_keeps_everything_in_order() {
        let events = vec![ext(1), api(1, 50)];
        assert_eq!(filter_window(events.clone(), 0), events);
    }
}
