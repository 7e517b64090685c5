//! The merged document: the CPU trace's top-level members in their order, with
//! `traceEvents` holding the CPU trace's kept events around the window's part (its
//! metadata, then its events), the rebuilt profiler span, then `traceName` and the
//! `cupmon` block.

use std::io::{self, Read, Write};

use super::cpu_scan::CpuScan;
use super::entries::{Entries, EventsWritten};
use super::off_clock::write_off_clock;
use super::sink::EventSink;
use super::span::py_max;
use super::stream::RangeCopier;
use super::{MergeStats, MergeWindow, UntimedGpuOps};
use crate::json::write::{write_json_float, write_json_str, ObjectWriter};
use crate::TraceError;

/// The window's side of a merged trace: its metadata events, then its events.
pub(crate) trait WindowPart {
    fn write_metadata<W: Write>(&mut self, sink: &mut EventSink<W>) -> Result<(), TraceError>;
    /// The events; returns their time range and the untimed GPU ops left out.
    fn write_events<W: Write>(
        &mut self,
        sink: &mut EventSink<W>,
    ) -> Result<EventsWritten, TraceError>;
}

/// The window in memory.
impl WindowPart for &Entries<'_> {
    fn write_metadata<W: Write>(&mut self, sink: &mut EventSink<W>) -> Result<(), TraceError> {
        Entries::write_metadata(self, sink)
    }

    fn write_events<W: Write>(
        &mut self,
        sink: &mut EventSink<W>,
    ) -> Result<EventsWritten, TraceError> {
        Entries::write_events(self, sink)
    }
}

/// The merged trace: the CPU trace's top-level members in order, `traceEvents` with
/// the window's part (`window`: the window, for its top-level facts, and how many
/// events it has), then `traceName` and the `cupmon` block when missing (the
/// window's, with the untimed GPU ops the events left out).
pub(crate) fn write_merged<W: Write>(
    out: &mut W,
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
    let mut first = true;
    let mut member = |out: &mut W, raw_key: &[u8]| -> io::Result<()> {
        out.write_all(if first { b"{" } else { b"," })?;
        first = false;
        out.write_all(raw_key)?;
        out.write_all(b":")
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
        .filter(|_| !exact && !scan.members.iter().any(|m| m.key == "distributedInfo"));
    for m in &scan.members {
        if m.key == "traceEvents" {
            if let Some(info) = distributed {
                member(out, b"\"distributedInfo\"")?;
                out.write_all(b" ")?;
                out.write_all(info.to_spaced_json().as_bytes())?;
            }
            member(out, &m.raw_key)?;
            (stats.events_written, stats.untimed_gpu_ops) =
                write_events(out, scan, part, open, off_clock)?;
            wrote_events = true;
        } else if m.key == "traceName" {
            member(out, &m.raw_key)?;
            write_name(out, trace_name)?;
            wrote_name = true;
        } else if let Some(v) = &m.raw_value {
            member(out, &m.raw_key)?;
            out.write_all(v)?;
        }
    }
    if !wrote_events {
        if let Some(info) = distributed {
            member(out, b"\"distributedInfo\"")?;
            out.write_all(b" ")?;
            out.write_all(info.to_spaced_json().as_bytes())?;
        }
        member(out, b"\"traceEvents\"")?;
        (stats.events_written, stats.untimed_gpu_ops) =
            write_events(out, scan, part, open, off_clock)?;
    }
    if !wrote_name {
        member(out, b"\"traceName\"")?;
        write_name(out, trace_name)?;
    }
    let untimed = &stats.untimed_gpu_ops;
    if window.cupmon.is_some() || !untimed.is_empty() {
        // A CPU trace that already has one (a trace merged before) keeps its own.
        if !scan.members.iter().any(|m| m.key == "cupmon") {
            member(out, b"\"cupmon\"")?;
            out.write_all(&cupmon_block(window.cupmon.as_ref(), untimed)?)?;
        }
    }
    out.write_all(b"}")?;
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

fn write_name(out: &mut impl Write, name: &str) -> io::Result<()> {
    let mut b = Vec::new();
    write_json_str(&mut b, name);
    out.write_all(&b)
}

/// `traceEvents`: leading CPU metadata, the window's metadata, the other CPU
/// events, the window's events, then the rebuilt profiler span and instants.
/// Returns the events written and the untimed GPU ops left out.
fn write_events<W: Write>(
    out: &mut W,
    scan: &CpuScan,
    part: &mut impl WindowPart,
    open: &dyn Fn() -> io::Result<Box<dyn Read>>,
    off_clock: &[serde_json::Value],
) -> Result<(u64, UntimedGpuOps), TraceError> {
    out.write_all(b"[")?;
    let mut sink = EventSink::new(&mut *out);
    let mut copier = None;
    let kept = &scan.events;
    let mut copy_runs = |sink: &mut EventSink<&mut W>, runs: &[std::ops::Range<u64>]| {
        for run in runs {
            let copier = match &mut copier {
                Some(c) => c,
                None => copier.insert(RangeCopier::new(open()?)),
            };
            sink.raw_elements(|o| copier.copy(run.clone(), o))?;
        }
        Ok::<(), io::Error>(())
    };
    copy_runs(&mut sink, &kept.head)?;
    part.write_metadata(&mut sink)?;
    copy_runs(&mut sink, &kept.tail)?;
    let written = part.write_events(&mut sink)?;
    let range = scan.range.then(written.range);
    if !range.has_events() {
        return Err(TraceError::NoDurationEvents);
    }
    let (min_ts, max_end) = (range.min_ts, range.max_end_ts);
    if !off_clock.is_empty() {
        write_off_clock(&mut sink, off_clock, min_ts)?;
    }
    ObjectWriter::new(sink.element())
        .str("ph", "X")
        .str("cat", "Trace")
        .str("name", "PyTorch Profiler (0)")
        .str("pid", "Spans")
        .str("tid", "PyTorch Profiler")
        .float("ts", min_ts)
        .float("dur", py_max(max_end - min_ts, 0.0))
        .with("args", |b| {
            ObjectWriter::new(b).int("Op count", 0).end();
        })
        .end();
    ObjectWriter::new(sink.element())
        .str("ph", "i")
        .str("s", "g")
        .str("name", "Iteration Start: PyTorch Profiler")
        .str("pid", "Traces")
        .str("tid", "Trace PyTorch Profiler")
        .with("ts", |b| write_json_float(b, min_ts))
        .end();
    ObjectWriter::new(sink.element())
        .str("ph", "i")
        .str("s", "g")
        .str("name", "Record Window End")
        .str("pid", "")
        .str("tid", "")
        .float("ts", max_end + 0.001)
        .end();
    let events = sink.written + kept.count;
    sink.finish()?;
    out.write_all(b"]")?;
    Ok((events, written.untimed))
}
