//! The merge over a CPU trace file (or one that can be read only once, copied first):
//! pass 1 and reading the window side by side, then the merged document written
//! whole or not at all; errors name the file and the place.

use std::io::{self, Read};
use std::path::Path;

use cupmon_files::{needs_spool, spool, temp_dir_for};

use super::cpu_scan::{scan_cpu_trace, CpuScan, ScanError};
use super::entries::Entries;
use super::stream::{locate, open_input};
use super::{clock_align, ClockAlignment};
use super::{complete, default_base_ns, write_merged, MergeOptions, MergeProgress, MergeStats};
use super::{MergeWindow, WindowSource};
use crate::output::{is_gz, AtomicOutput};
use crate::{TraceError, TraceFormat};

/// Merge a window into the CPU trace at `cpu_path`, writing `output`
/// (`.gz` in and out by file name), as PyTorch's merge does. A CPU trace
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
/// PyTorch's merge accepts one (`{}`, a trace window given as the CPU trace) into a
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
    // The window's clock against the CPU ops' (complete merges only: `exact` keeps
    // PyTorch's output, and only says when the window is on another clock).
    let planned = clock_align::plan(window, &scan.span_by_external_id, base_ns);
    let aligned;
    let (window, clock_alignment) = match planned {
        Some(plan) if options.exact => {
            let unplaced = ClockAlignment {
                method: "none",
                outside_after: plan.outside_before,
                shift_ns: 0,
                ns_per_tick_ppb: None,
                ..plan
            };
            (window, (unplaced.foreign_records > 0).then_some(unplaced))
        }
        Some(plan) => {
            let mut copy = window.clone();
            clock_align::apply(&mut copy, &plan);
            aligned = copy;
            (&aligned, Some(plan))
        }
        None => (window, None),
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
    stats.clock_alignment = clock_alignment;
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
