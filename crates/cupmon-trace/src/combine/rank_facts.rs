//! What `combine` keeps and checks of each input beside its events: where its rank
//! came from, its `cupmon` block's counts (dropped records, GPU ops without a time),
//! and its time span, so that inputs that are not one job's ranks at one time (no
//! `distributedInfo`, spans that do not overlap) are said, not combined silently.

use std::path::PathBuf;

use serde_json::{json, Map, Value};

/// An input numbered by its place on the command line (it has no
/// `distributedInfo.rank`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberedInput {
    pub rank: i64,
    pub file: PathBuf,
}

/// An input's time span on the combined axis (Unix ns, offsets applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankSpan {
    pub rank: i64,
    pub file: PathBuf,
    pub start_ns: i128,
    pub end_ns: i128,
}

/// The span of a trace's timed complete events (`ph` X), in ns after its base
/// time; events before the base (a GPU op CUPTI gave no time, drawn at Unix 0 by
/// an exact merge) are not part of it.
pub fn span_after_base(trace: &Value) -> Option<(i128, i128)> {
    let mut span: Option<(f64, f64)> = None;
    for e in trace["traceEvents"].as_array().into_iter().flatten() {
        if e.get("ph").and_then(Value::as_str) != Some("X") {
            continue;
        }
        let Some(ts) = e.get("ts").and_then(Value::as_f64).filter(|t| *t >= 0.0) else {
            continue;
        };
        let end = ts + e.get("dur").and_then(Value::as_f64).unwrap_or(0.0).max(0.0);
        span = Some(span.map_or((ts, end), |(a, b)| (a.min(ts), b.max(end))));
    }
    span.map(|(a, b)| ((a * 1000.0) as i128, (b * 1000.0) as i128))
}

/// The counts of an input's `cupmon` block that the combined trace keeps per rank.
pub fn kept_counts(trace: &Value) -> Map<String, Value> {
    let mut kept = Map::new();
    if let Some(block) = trace.get("cupmon").and_then(Value::as_object) {
        for key in [
            "dropped_records",
            "dropped_records_note",
            "untimed_gpu_ops",
            "off_clock_records",
            "retired",
        ] {
            if let Some(v) = block.get(key) {
                kept.insert(key.to_owned(), v.clone());
            }
        }
    }
    kept
}

/// The combined trace's `dropped_records`: the sum of the inputs' counts, `null`
/// when one cannot say (its count is `null`); absent when no input has a count.
pub fn total_dropped(per_rank: &[Map<String, Value>]) -> Option<Value> {
    let counts: Vec<&Value> = per_rank
        .iter()
        .filter_map(|m| m.get("dropped_records"))
        .collect();
    if counts.is_empty() {
        return None;
    }
    let sum: Option<u64> = counts.iter().map(|v| v.as_u64()).sum();
    Some(sum.map_or(Value::Null, |n| json!(n)))
}

/// Pairs of inputs whose spans do not overlap (the earlier one first).
pub fn disjoint_pairs(spans: &[RankSpan]) -> Vec<(&RankSpan, &RankSpan)> {
    let mut pairs = Vec::new();
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            let (first, second) = if a.start_ns <= b.start_ns {
                (a, b)
            } else {
                (b, a)
            };
            if first.end_ns < second.start_ns {
                pairs.push((first, second));
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(rank: i64, start_ns: i128, end_ns: i128) -> RankSpan {
        RankSpan {
            rank,
            file: format!("r{rank}.json").into(),
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn spans_leave_out_events_before_the_base_and_metadata() {
        let t = json!({"traceEvents": [
            {"ph": "M", "ts": 0, "name": "process_name"},
            {"ph": "X", "ts": -1.7e12, "dur": 1.0},
            {"ph": "X", "ts": 5.5, "dur": 1.25},
            {"ph": "X", "ts": 2.0, "dur": 0.5},
            {"ph": "i", "ts": 100.0},
        ]});
        assert_eq!(span_after_base(&t), Some((2000, 6750)));
        assert_eq!(span_after_base(&json!({"traceEvents": []})), None);
    }

    #[test]
    fn dropped_records_sum_or_null_when_one_rank_cannot_say() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let known = [
            m(json!({"dropped_records": 2})),
            m(json!({"dropped_records": 3})),
        ];
        assert_eq!(total_dropped(&known), Some(json!(5)));
        let unknown = [
            m(json!({"dropped_records": 2})),
            m(json!({"dropped_records": null})),
        ];
        assert_eq!(total_dropped(&unknown), Some(Value::Null));
        assert_eq!(total_dropped(&[Map::new()]), None);
    }

    #[test]
    fn only_spans_that_do_not_meet_are_disjoint() {
        let spans = [span(0, 0, 10), span(1, 5, 20), span(2, 30, 40)];
        let pairs: Vec<(i64, i64)> = disjoint_pairs(&spans)
            .iter()
            .map(|(a, b)| (a.rank, b.rank))
            .collect();
        assert_eq!(pairs, [(0, 2), (1, 2)]);
    }
}
