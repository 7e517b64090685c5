//! Records on a clock cupmon could not convert (`cupmon_records::clock::OFF_CLOCK_RULE`):
//! a complete trace shows them in a process of their own, named
//! [`OFF_CLOCK_TRACK`], one thread per kind, never among the GPU's and CPU's tracks.
//! Their times are CUPTI's raw ones (a client's cycle counter, not ns since any known
//! moment), so they are drawn from the start of the trace's other events, each at its
//! distance in raw ticks from the first of them, and flagged: args `clock`
//! ([`OFF_CLOCK_NAME`]) and the raw `start`/`end` as written. Drawn at their raw value
//! they would land in 1970 and stretch the timeline by decades. PyTorch's merge
//! (`--exact`) knows nothing of them and writes none.

use std::borrow::Cow;

use cupmon_records::clock::{OFF_CLOCK_NAME, OFF_CLOCK_TRACK};
use serde_json::{Map, Value};

use crate::event::{ArgValue, Args, EventSink, Id, Phase, TraceEvent};
use crate::{OffClockEvents, WindowEvent};

/// A window's events on their own clock, as the window JSON holds them.
pub(crate) type OffClock = Vec<Value>;

/// The events of `off`, as JSON objects.
pub(crate) fn from_window(off: Option<&OffClockEvents>) -> OffClock {
    off.map_or_else(Vec::new, |o| o.events.iter().map(to_value).collect())
}

/// One event as a JSON object (`kind` first).
pub(crate) fn to_value(e: &WindowEvent) -> Value {
    serde_json::to_value(e).unwrap_or(Value::Null)
}

/// The events of a window file's `off_clock` member (anything else is none).
pub(crate) fn parse(v: Value) -> OffClock {
    match v {
        Value::Object(mut m) => match m.remove("events") {
            Some(Value::Array(events)) => events.into_iter().filter(Value::is_object).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A raw time of `e`: its start (or instant) and end, 0 where it has none.
fn raw_times(e: &Map<String, Value>) -> (u64, u64) {
    let at = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0);
    let start = ["start_ns", "timestamp_ns", "device_timestamp_ns"]
        .iter()
        .map(|k| at(k))
        .find(|&t| t > 0)
        .unwrap_or(0);
    let end = at("end_ns").max(start);
    (start, end)
}

/// Write the events of `off` that have a time, drawn from `first_ts` (µs, the trace's
/// first event): the process's name, a thread name per kind, then the events.
pub(crate) fn write_off_clock(
    sink: &mut dyn EventSink,
    off: &[Value],
    first_ts: f64,
) -> std::io::Result<()> {
    let timed: Vec<(&Map<String, Value>, u64, u64)> = off
        .iter()
        .filter_map(Value::as_object)
        .filter(|e| e.get("kind").and_then(Value::as_str) != Some("external_correlation"))
        .filter_map(|e| {
            let (start, end) = raw_times(e);
            (start > 0).then_some((e, start, end))
        })
        .collect();
    let Some(origin) = timed.iter().map(|t| t.1).min() else {
        return Ok(());
    };
    let track = || Some(Id::Text(Cow::Borrowed(OFF_CLOCK_TRACK)));
    let process_args = [("name", ArgValue::Str(OFF_CLOCK_TRACK))];
    sink.event(&TraceEvent {
        name: Cow::Borrowed("process_name"),
        ts: Some(first_ts),
        pid: track(),
        tid: Some(Id::Text(Cow::Borrowed(""))),
        ..TraceEvent::new(Phase::Metadata).with_args(&process_args)
    })?;
    let mut kinds: Vec<&str> = timed
        .iter()
        .filter_map(|t| t.0.get("kind").and_then(Value::as_str))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in &kinds {
        let thread_args = [("name", ArgValue::Str(kind))];
        sink.event(&TraceEvent {
            name: Cow::Borrowed("thread_name"),
            ts: Some(first_ts),
            pid: track(),
            tid: Some(Id::Text(Cow::Borrowed(kind))),
            ..TraceEvent::new(Phase::Metadata).with_args(&thread_args)
        })?;
    }
    for (e, start, end) in timed {
        let kind = e.get("kind").and_then(Value::as_str).unwrap_or("");
        let name = e.get("name").and_then(Value::as_str).unwrap_or(kind);
        let mut args = Map::new();
        args.insert("clock".into(), OFF_CLOCK_NAME.into());
        args.insert("raw start".into(), start.into());
        args.insert("raw end".into(), end.into());
        for (k, v) in e {
            if !matches!(k.as_str(), "kind" | "name") && !k.ends_with("_ns") {
                args.insert(k.clone(), v.clone());
            }
        }
        let args = serde_json::to_vec(&Value::Object(args)).unwrap_or_default();
        let mut event = TraceEvent::slice(
            kind,
            name,
            Id::Text(Cow::Borrowed(OFF_CLOCK_TRACK)),
            Id::Text(Cow::Borrowed(kind)),
            first_ts + (start - origin) as f64 / 1000.0,
            (end - start) as f64 / 1000.0,
        );
        event.args = Args::Json(&args);
        sink.event(&event)?;
    }
    Ok(())
}
