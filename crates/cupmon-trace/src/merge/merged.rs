//! The merged document: the CPU trace's top-level members in their order, with
//! `traceEvents` holding the CPU trace's kept events around the window's part (its
//! metadata, then its events), the rebuilt profiler span, then `traceName` and the
//! `cupmon` block.

use std::borrow::Cow;
use std::io::{self, Read};

use super::cpu_scan::CpuScan;
use super::entries::{Entries, EventsWritten};
use super::off_clock::write_off_clock;
use super::span::py_max;
use super::stream::RangeCopier;
use super::{MergeStats, MergeWindow, UntimedGpuOps};
use crate::event::{ArgValue, EventSink, Id, Phase, Scope, TraceEvent};
use crate::json::write::write_json_str;
use crate::trace_sink::TraceSink;
use crate::TraceError;

/// The window's side of a merged trace: its metadata events, then its events.
pub(crate) trait WindowPart {
    fn write_metadata(&mut self, sink: &mut dyn EventSink) -> Result<(), TraceError>;
    /// The events; returns their time range and the untimed GPU ops left out.
    fn write_events(&mut self, sink: &mut dyn EventSink) -> Result<EventsWritten, TraceError>;
}

/// The window in memory.
impl WindowPart for &Entries<'_> {
    fn write_metadata(&mut self, sink: &mut dyn EventSink) -> Result<(), TraceError> {
        Entries::write_metadata(self, sink)
    }

    fn write_events(&mut self, sink: &mut dyn EventSink) -> Result<EventsWritten, TraceError> {
        Entries::write_events(self, sink)
    }
}

/// The merged trace: the CPU trace's top-level members in order, `traceEvents` with
/// the window's part (`window`: the window, for its top-level facts, and how many
/// events it has), then `traceName` and the `cupmon` block when missing (the
/// window's, with the untimed GPU ops the events left out).
pub(crate) fn write_merged(
    out: &mut TraceSink,
    scan: &CpuScan,
    part: &mut impl WindowPart,
    open: &dyn Fn() -> io::Result<Box<dyn Read>>,
    trace_name: &str,
    (window, window_events): (&MergeWindow, usize),
    exact: bool,
) -> Result<MergeStats, TraceError> {
    let mut stats = MergeStats {
        cpu_events_kept: scan.events.count,
        cpu_events_replaced: scan.events.dropped,
        window_events,
        events_written: 0,
        pftrace: None,
        untimed_gpu_ops: UntimedGpuOps::default(),
        clock_alignment: None,
    };
    // PyTorch's merge knows nothing of them.
    let off_clock = if exact {
        &[][..]
    } else {
        &window.off_clock[..]
    };
    let mut wrote_events = false;
    let mut wrote_name = false;
    // The rank goes before traceEvents: HolisticTraceAnalysis reads it from the head.
    let distributed = window
        .distributed_info
        .as_ref()
        .filter(|_| !exact && !scan.members.iter().any(|m| m.key == "distributedInfo"))
        .map(|info| format!(" {}", info.to_spaced_json()));
    for m in &scan.members {
        if m.key == "traceEvents" {
            if let Some(info) = &distributed {
                out.member(b"\"distributedInfo\"", info.as_bytes())?;
            }
            (stats.events_written, stats.untimed_gpu_ops) = out.events(&m.raw_key, |sink| {
                write_events(sink, scan, part, open, off_clock)
            })?;
            wrote_events = true;
        } else if m.key == "traceName" {
            out.member(&m.raw_key, &name_json(trace_name))?;
            wrote_name = true;
        } else if let Some(v) = &m.raw_value {
            out.member(&m.raw_key, v)?;
        }
    }
    if !wrote_events {
        if let Some(info) = &distributed {
            out.member(b"\"distributedInfo\"", info.as_bytes())?;
        }
        (stats.events_written, stats.untimed_gpu_ops) = out.events(b"\"traceEvents\"", |sink| {
            write_events(sink, scan, part, open, off_clock)
        })?;
    }
    if !wrote_name {
        out.member(b"\"traceName\"", &name_json(trace_name))?;
    }
    let untimed = &stats.untimed_gpu_ops;
    if window.cupmon.is_some() || !untimed.is_empty() {
        // A CPU trace that already has one (a trace merged before) keeps its own.
        if !scan.members.iter().any(|m| m.key == "cupmon") {
            out.member(
                b"\"cupmon\"",
                &cupmon_block(window.cupmon.as_ref(), untimed)?,
            )?;
        }
    }
    out.end()?;
    Ok(stats)
}

/// The `cupmon` block: the window's facts (a window not written by cupmon has none:
/// then only cupmon's version), then `untimed_gpu_ops` when any were left out.
fn cupmon_block(info: Option<&crate::CupmonInfo>, untimed: &UntimedGpuOps) -> io::Result<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Block<'a> {
        #[serde(flatten)]
        info: Option<&'a crate::CupmonInfo>,
        #[serde(skip_serializing_if = "Option::is_none")]
        version: Option<&'static str>,
        #[serde(skip_serializing_if = "UntimedGpuOps::is_empty")]
        untimed_gpu_ops: &'a UntimedGpuOps,
    }
    let block = Block {
        info,
        version: info.is_none().then_some(env!("CARGO_PKG_VERSION")),
        untimed_gpu_ops: untimed,
    };
    serde_json::to_vec(&block).map_err(io::Error::other)
}

fn name_json(name: &str) -> Vec<u8> {
    let mut b = Vec::new();
    write_json_str(&mut b, name);
    b
}

/// `traceEvents`: leading CPU metadata, the window's metadata, the other CPU
/// events, the window's events, then the rebuilt profiler span and instants.
/// Returns the events written and the untimed GPU ops left out.
fn write_events(
    sink: &mut dyn EventSink,
    scan: &CpuScan,
    part: &mut impl WindowPart,
    open: &dyn Fn() -> io::Result<Box<dyn Read>>,
    off_clock: &[serde_json::Value],
) -> Result<(u64, UntimedGpuOps), TraceError> {
    let mut copier = None;
    let kept = &scan.events;
    let mut copy_runs = |sink: &mut dyn EventSink, runs: &[std::ops::Range<u64>]| {
        for run in runs {
            let copier = match &mut copier {
                Some(c) => c,
                None => copier.insert(RangeCopier::new(open()?)),
            };
            sink.input_events(&mut |mut o| copier.copy(run.clone(), &mut o))?;
        }
        Ok::<(), io::Error>(())
    };
    copy_runs(sink, &kept.head)?;
    part.write_metadata(sink)?;
    copy_runs(sink, &kept.tail)?;
    let written = part.write_events(sink)?;
    let range = scan.range.then(written.range);
    if !range.has_events() {
        return Err(TraceError::NoDurationEvents);
    }
    let (min_ts, max_end) = (range.min_ts, range.max_end_ts);
    if !off_clock.is_empty() {
        write_off_clock(sink, off_clock, min_ts)?;
    }
    let text = |t: &'static str| Some(Id::Text(Cow::Borrowed(t)));
    let no_ops = [("Op count", ArgValue::Int(0))];
    sink.event(
        &TraceEvent::slice(
            "Trace",
            "PyTorch Profiler (0)",
            Id::Text(Cow::Borrowed("Spans")),
            Id::Text(Cow::Borrowed("PyTorch Profiler")),
            min_ts,
            py_max(max_end - min_ts, 0.0),
        )
        .with_args(&no_ops),
    )?;
    let global = |name: &'static str, pid, tid, ts| TraceEvent {
        name: Cow::Borrowed(name),
        pid: text(pid),
        tid: text(tid),
        ts: Some(ts),
        scope: Scope::Global,
        ..TraceEvent::new(Phase::Instant)
    };
    sink.event(&global(
        "Iteration Start: PyTorch Profiler",
        "Traces",
        "Trace PyTorch Profiler",
        min_ts,
    ))?;
    sink.event(&global("Record Window End", "", "", max_end + 0.001))?;
    let events = sink.written() + kept.count;
    Ok((events, written.untimed))
}
