//! The closing lines of the commands that write a trace: what was written,
//! what was left out, how the clocks were aligned.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use cupmon_trace::{
    export_window, ExportOptions, MergeStats, MergeWindow, PftraceStats, TraceFormat, UntimedGpuOps,
};

/// Write `window` as a standalone trace at `output` and say so.
pub fn export_trace(
    window: &MergeWindow,
    output: &Path,
    trace_name: Option<String>,
    exact: bool,
    format: Option<TraceFormat>,
) -> Result<()> {
    let options = ExportOptions {
        trace_name,
        device_properties_json: None,
        exact,
        format,
    };
    let stats = export_window(window, output, &options)?;
    print_written(output, &stats);
    Ok(())
}

/// The closing line of every command that writes a trace (after the Perfetto
/// conversion's warnings, when it is a `.pftrace`).
pub fn print_written(path: &Path, stats: &MergeStats) {
    warn_untimed(path, &stats.untimed_gpu_ops);
    if let Some(a) = &stats.clock_alignment {
        say_clock_alignment(path, a);
    }
    print_trace_written(path, stats.events_written, stats.pftrace.as_ref());
}

/// What the merge did about a window on torch.profiler's cycle counter.
fn say_clock_alignment(path: &Path, a: &cupmon_trace::ClockAlignment) {
    let path = path.display();
    let (linked, before, after) = (a.linked_calls, a.outside_before, a.outside_after);
    match a.method {
        "line" => eprintln!(
            "cupmon: warning: {path}: the window's {} records are on another clock than the \
             CPU trace's (torch.profiler's cycle counter) and it holds no clock samples: placed \
             by the {linked} CUDA calls linked to CPU ops ({:.4} ns per tick; {after} of them \
             outside their op); the trace's cupmon.clock_alignment says how",
            a.foreign_records,
            a.ns_per_tick_ppb.unwrap_or(0) as f64 / 1e9
        ),
        "shift" => eprintln!(
            "cupmon: {path}: {before} of the {linked} CUDA calls linked to CPU ops lay outside \
             their op (the window's clock was converted from torch.profiler's cycle counter); \
             shifted the window by {:+.3} us, {after} remain outside",
            a.shift_ns as f64 / 1e3
        ),
        _ => eprintln!(
            "cupmon: warning: {path}: the window's {} records are on another clock than the \
             CPU trace's (torch.profiler's cycle counter, with no clock samples to convert \
             them{}): they are left at their raw times, far from the CPU ops",
            a.foreign_records,
            if linked == 0 {
                ", and no CUDA call linked to a CPU op to place them by"
            } else {
                "; --exact does not place them, the default merge does"
            }
        ),
    }
}

/// One line for the GPU ops a complete trace left out for want of a time.
fn warn_untimed(path: &Path, untimed: &UntimedGpuOps) {
    if untimed.is_empty() {
        return;
    }
    let kinds: Vec<String> = untimed
        .by_kind()
        .iter()
        .map(|(kind, n)| format!("{n} {kind}"))
        .collect();
    eprintln!(
        "cupmon: warning: {}: left out {} GPU ops that CUPTI gave no time (timestamp 0: {}); \
         the trace's cupmon.untimed_gpu_ops counts them",
        path.display(),
        untimed.total(),
        kinds.join(", ")
    );
}

/// [`print_written`] from the event count and the Perfetto trace's stats.
fn print_trace_written(path: &Path, events: u64, pftrace: Option<&PftraceStats>) {
    let what = match pftrace {
        None => format!("{events} events"),
        Some(p) => {
            for w in p.warnings() {
                eprintln!("cupmon: warning: {}: {w}", path.display());
            }
            format!(
                "Perfetto protobuf, {} bytes: {} slices, {} instants, {} counter values, {} flow \
                 ends from {events} JSON events",
                p.bytes, p.slices, p.instants, p.counter_values, p.flow_events_bound
            )
        }
    };
    say_written(
        path,
        &format!(
            "wrote {} ({what}); open it in https://ui.perfetto.dev",
            path.display()
        ),
    );
}

/// A closing line goes to stdout, unless the output itself went to a
/// stream (`-`, a pipe, a device): then to stderr, so it never mixes with
/// the data. The work is done: a closed stdout (`| head`) is no failure.
pub fn say_written(output: &Path, line: &str) {
    if cupmon_files::writes_in_place(output) {
        eprintln!("{line}");
    } else {
        let _ = writeln!(std::io::stdout(), "{line}");
    }
}

/// The CPU trace is a pipe or a FIFO: the merge copies it (it reads it twice).
pub fn note_if_spooled(cpu: &Path) {
    if cupmon_files::needs_spool(cpu) {
        eprintln!(
            "cupmon: note: {} is not a regular file (a pipe, FIFO or device); the merge reads \
             its CPU trace twice, so it is first copied to a temporary file (removed at the end)",
            cpu.display()
        );
    }
}
