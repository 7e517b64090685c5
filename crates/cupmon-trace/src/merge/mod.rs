//! The Kineto trace merge: `merge_trace_window_into_chrome_trace` of the seed,
//! streamed. Pass 1 reads the CPU trace for what the merge needs; pass 2
//! copies the kept CPU events' text into the output around the window's events.

mod args;
mod chrome_out;
mod complete;
mod cpu_event;
mod cpu_scan;
mod entries;
mod from_typed;
#[cfg(feature = "internals")]
pub mod internals;
mod lanes;
mod lookahead;
mod nccl_args;
mod param_comms;
mod sink;
mod span;
mod stream;
mod streamed;
mod survey;
mod untimed;
mod window_event;
pub(crate) mod window_input;
mod window_parse;

use std::io::{self, Read, Write};
use std::path::Path;

use crate::json::write::{write_json_float, write_json_str, ObjectWriter};
use crate::output::{is_gz, temp_dir_for, AtomicOutput};
use crate::spool::{needs_spool, spool};
use crate::{PftraceStats, TraceError, TraceFormat};
use cpu_scan::{scan_cpu_trace, CpuScan, ScanError};
use entries::{Entries, EventsWritten};
use sink::EventSink;
use span::py_max;
use stream::{locate, open_input, RangeCopier};
pub use streamed::{DumpExport, DumpExportStats};
pub use untimed::UntimedGpuOps;
pub use window_input::MergeWindow;

/// Kineto rounds its trace base time down to this many seconds (~3 months).
pub const TRIMESTER_SECONDS: i128 = 7_889_238;

/// The default of [`MergeOptions::max_event_bytes`]: 1 GiB.
pub const DEFAULT_MAX_EVENT_BYTES: u64 = 1 << 30;

/// Options of a merge.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// `traceName` of the output; the seed uses the output path when unset.
    pub trace_name: Option<String>,
    /// Exactly PyTorch's `merge_trace_window_into_chrome_trace`'s output; otherwise
    /// (the default) the complete trace: the same events and times with Kineto's
    /// names and args, overlap tracks and the kinds PyTorch's merge does not know.
    pub exact: bool,
    /// The largest JSON value the merge reads whole (a CPU-trace event, a
    /// window event, a top-level member such as `user_annotations`), as text
    /// and as parsed memory; a larger one is an error naming its file and
    /// offset. The CPU trace's top-level members other than `traceEvents`,
    /// kept for the output, may not exceed it together either. It bounds the
    /// merge's memory beyond what the window's events themselves take.
    /// Default [`DEFAULT_MAX_EVENT_BYTES`].
    pub max_event_bytes: u64,
    /// The output's format; `None`: by its name (`.pftrace`, `.pftrace.gz`:
    /// Perfetto protobuf, else Chrome JSON).
    pub format: Option<TraceFormat>,
}

impl Default for MergeOptions {
    fn default() -> Self {
        Self {
            trace_name: None,
            exact: false,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            format: None,
        }
    }
}

/// What a merge did, for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeStats {
    pub cpu_events_kept: u64,
    pub cpu_events_replaced: u64,
    pub window_events: usize,
    /// Events of the trace as Chrome JSON writes it (a Perfetto trace holds
    /// the same, converted: see `pftrace`).
    pub events_written: u64,
    /// What the Perfetto trace holds, when the output is one.
    pub pftrace: Option<PftraceStats>,
    /// GPU ops without a time that the complete trace left out (none with `exact`).
    pub untimed_gpu_ops: UntimedGpuOps,
}

/// Progress of a long merge, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum MergeProgress {
    /// Pass 1 has read this many (decompressed) bytes of the CPU trace.
    Scanned(u64),
}

/// The seed's default base time: now, rounded down to a trimester.
pub fn default_base_ns() -> i128 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::from(d.as_secs()));
    trimester_floor_ns(now * 1_000_000_000)
}

/// Round a Unix time in ns down to Kineto's trimester boundary.
pub fn trimester_floor_ns(unix_ns: i128) -> i128 {
    let secs = unix_ns.div_euclid(1_000_000_000);
    secs.div_euclid(TRIMESTER_SECONDS) * TRIMESTER_SECONDS * 1_000_000_000
}

/// Where the merge gets its window: already in memory, or read from a file
/// while the CPU trace's first pass runs on another thread.
#[derive(Debug)]
pub enum WindowSource<'a> {
    Loaded(&'a MergeWindow),
    File(&'a Path),
}

/// Merge a window into the CPU trace at `cpu_path`, writing `output`
/// (`.gz` in and out by file name), as the seed's merge does. A CPU trace
/// that can be read only once (a pipe, a FIFO) is first copied to a
/// temporary file beside the output, removed afterwards.
pub fn merge_files(
    cpu_path: &Path,
    window: WindowSource<'_>,
    output: &Path,
    options: &MergeOptions,
    progress: &mut (dyn FnMut(MergeProgress) + Send),
) -> Result<MergeStats, TraceError> {
    merge_path(cpu_path, window, output, options, progress, false)
}

/// [`merge_files`], but a CPU trace without `traceEvents` is an error. The
/// seed merges one (`{}`, a trace window given as the CPU trace) into a
/// trace with no CPU events; from a user that is always a mistake.
pub fn merge_files_strict(
    cpu_path: &Path,
    window: WindowSource<'_>,
    output: &Path,
    options: &MergeOptions,
    progress: &mut (dyn FnMut(MergeProgress) + Send),
) -> Result<MergeStats, TraceError> {
    merge_path(cpu_path, window, output, options, progress, true)
}

fn merge_path(
    cpu_path: &Path,
    window: WindowSource<'_>,
    output: &Path,
    options: &MergeOptions,
    progress: &mut (dyn FnMut(MergeProgress) + Send),
    require_events: bool,
) -> Result<MergeStats, TraceError> {
    let spooled = if needs_spool(cpu_path) {
        let label = format!(
            "{}.cpu",
            output.file_name().unwrap_or_default().to_string_lossy()
        );
        Some(spool(cpu_path, &temp_dir_for(output), &label)?)
    } else {
        None
    };
    let read_path = spooled.as_ref().map_or(cpu_path, |s| s.path());
    let open = || -> io::Result<Box<dyn Read>> {
        // A spooled copy keeps the original's compression, which its name decides.
        if spooled.is_some() && is_gz(cpu_path) {
            let file = std::fs::File::open(read_path)?;
            let buffered = io::BufReader::with_capacity(1 << 20, file);
            return Ok(Box::new(flate2::read::MultiGzDecoder::new(buffered)));
        }
        if spooled.is_some() {
            return Ok(Box::new(std::fs::File::open(read_path)?));
        }
        Ok(open_input(cpu_path)?)
    };
    merge_source(
        &cpu_path.display().to_string(),
        &open,
        window,
        output,
        options,
        progress,
        require_events,
    )
}

/// The merge over a CPU trace that `open` can read twice.
pub(crate) fn merge_source(
    cpu_name: &str,
    open: &(dyn Fn() -> io::Result<Box<dyn Read>> + Sync),
    window: WindowSource<'_>,
    output: &Path,
    options: &MergeOptions,
    progress: &mut (dyn FnMut(MergeProgress) + Send),
    require_events: bool,
) -> Result<MergeStats, TraceError> {
    let read_err = |err: io::Error| TraceError::Io {
        path: cpu_name.into(),
        what: "cannot read",
        err,
    };
    let limit = options.max_event_bytes;
    // Pass 1 and reading the window are independent: do them side by side.
    let (scan, loaded) = std::thread::scope(|scope| {
        let loader = match window {
            WindowSource::File(path) => {
                Some(scope.spawn(move || MergeWindow::read_with_limit(path, limit)))
            }
            WindowSource::Loaded(_) => None,
        };
        let scan = open().map_err(read_err).and_then(|src| {
            scan_cpu_trace(src, limit, &mut |bytes| {
                progress(MergeProgress::Scanned(bytes))
            })
            .map_err(|e| scan_error(cpu_name, open, e))
        });
        let loaded = loader.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (scan, loaded)
    });
    let mut scan = scan?;
    if require_events && !scan.members.iter().any(|m| m.key == "traceEvents") {
        return Err(no_trace_events(cpu_name, &scan));
    }
    let loaded = loaded.transpose()?;
    let window = match (&window, &loaded) {
        (_, Some(w)) => w,
        (WindowSource::Loaded(w), None) => *w,
        (WindowSource::File(_), None) => unreachable!("a file source is always loaded"),
    };
    scan.keep_external_ids(&window.correlated_external_ids());
    let base_ns = match &scan.base_ns {
        Some(Ok(b)) => *b,
        Some(Err(msg)) => {
            return Err(TraceError::Input {
                file: cpu_name.to_owned(),
                location: "top level".to_owned(),
                msg: msg.clone(),
            })
        }
        None => default_base_ns(),
    };
    let complete = (!options.exact).then(|| {
        let props = window.device_properties.clone().or_else(|| {
            scan.members
                .iter()
                .find(|m| m.key == "deviceProperties")
                .and_then(|m| m.raw_value.as_ref())
                .map(|v| String::from_utf8_lossy(v).into_owned())
        });
        complete::Complete::new(window, props.as_deref())
            .with_comms(std::mem::take(&mut scan.comms_by_external_id))
    });
    let exact = options.exact;
    let entries = Entries::new(window, base_ns, &scan.thread_by_external_id, complete);
    let out = AtomicOutput::create(output)?;
    let trace_name = options
        .trace_name
        .clone()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| output.display().to_string());
    let format = TraceFormat::resolve(options.format, output);
    let mut writer = out.trace_writer(format, base_ns)?;
    let mut stats = write_merged(
        &mut writer,
        &scan,
        &mut &entries,
        open,
        &trace_name,
        (window, window.events.len()),
        exact,
    )
    .map_err(|e| name_output(e, output))?;
    stats.pftrace = out.commit_trace(writer)?;
    Ok(stats)
}

/// A write error, with the output's name.
pub(crate) fn name_output(e: TraceError, output: &Path) -> TraceError {
    match e {
        TraceError::Write(err) => TraceError::Io {
            path: output.to_path_buf(),
            what: "cannot write",
            err,
        },
        other => other,
    }
}

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

/// A CPU trace without `traceEvents`: say what it looks like instead.
fn no_trace_events(cpu_name: &str, scan: &CpuScan) -> TraceError {
    let has = |key: &str| scan.members.iter().any(|m| m.key == key);
    let looks_like = if has("events") {
        " (it has 'events': it looks like a trace window, which goes to --window)"
    } else {
        ""
    };
    TraceError::Input {
        file: cpu_name.to_owned(),
        location: "top level".to_owned(),
        msg: format!(
            "no 'traceEvents': not a torch.profiler CPU trace{looks_like}; PyTorch's \
             merge_trace_window_into_chrome_trace would merge it as a trace without CPU \
             events, but that is always the wrong file"
        ),
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
    };
    let mut first = true;
    let mut member = |out: &mut W, raw_key: &[u8]| -> io::Result<()> {
        out.write_all(if first { b"{" } else { b"," })?;
        first = false;
        out.write_all(raw_key)?;
        out.write_all(b":")
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
            (stats.events_written, stats.untimed_gpu_ops) = write_events(out, scan, part, open)?;
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
        (stats.events_written, stats.untimed_gpu_ops) = write_events(out, scan, part, open)?;
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

/// Turn a pass-1 failure into an error naming the file, line and column.
fn scan_error(
    name: &str,
    open: &dyn Fn() -> io::Result<Box<dyn Read>>,
    e: ScanError,
) -> TraceError {
    let located = match e {
        ScanError::Stream(e) => e.located("unexpected end of file (is the file truncated?)"),
        ScanError::At { offset, msg } => Ok((offset, msg)),
    };
    match located {
        Ok((offset, msg)) => TraceError::Input {
            file: name.to_owned(),
            location: locate(open(), offset),
            msg,
        },
        Err(err) => TraceError::Io {
            path: name.into(),
            what: "cannot read",
            err,
        },
    }
}
