//! `cupmon decode`: a raw dump into a trace window, a trace, or a merged trace.

use std::io::Write;

use anyhow::{Context, Result};
use cupmon_records::{decode_dump_to_window, DecodeReport};
use cupmon_trace::{
    merge_files, AtomicOutput, MergeOptions, MergeWindow, TraceWindow, WindowSource,
};

use super::{check_output, print_trace_written};
use crate::cli::{DecodeArgs, DecodeFormat};
use crate::progress::Progress;

pub fn run(args: &DecodeArgs) -> Result<i32> {
    let mut inputs = vec![args.dump_dir.as_path()];
    if let Some(cpu) = &args.cpu {
        inputs.push(cpu);
    }
    check_output(&args.output, &inputs)?;
    let (window, report) = decode(&args.dump_dir)?;
    print_report(&report);
    if let Some(cpu) = &args.cpu {
        let stats = merge_files(
            cpu,
            WindowSource::Loaded(&MergeWindow::from(&window)),
            &args.output,
            &MergeOptions {
                trace_name: args.trace_name.clone(),
                max_event_bytes: args.max_event_size,
            },
            &mut |_| {},
        )?;
        print_trace_written(&args.output, stats.events_written);
        return Ok(0);
    }
    match args.format {
        DecodeFormat::Window => {
            write_window(&window, &args.output)?;
            println!(
                "wrote {} ({} events); merge it with `cupmon merge --cpu TRACE --window {}`",
                args.output.display(),
                window.events.len(),
                args.output.display()
            );
        }
        DecodeFormat::Chrome => {
            let window = MergeWindow::from(&window);
            super::export_trace(&window, &args.output, args.trace_name.clone())?;
        }
    }
    Ok(0)
}

/// Decode a dump with a progress line for large ones.
pub fn decode(dir: &std::path::Path) -> Result<(TraceWindow, DecodeReport)> {
    let mut progress = Progress::dump("decoding", dir);
    let decoded = decode_dump_to_window(dir, |p| progress.update(p.bytes_read))?;
    progress.finish();
    Ok(decoded)
}

/// Warnings on stderr: the output is incomplete, and the user must know.
pub fn print_report(report: &DecodeReport) {
    for warning in &report.warnings {
        eprintln!("cupmon: warning: {warning}");
    }
    if let Some(dropped) = report.dropped_records.filter(|&d| d > 0) {
        eprintln!("cupmon: warning: CUPTI dropped {dropped} records while recording this dump");
    }
    if report.unresolved_kernel_names > 0 {
        eprintln!(
            "cupmon: warning: {} kernel records have no name in kernel_names.tsv (shown as kernel@0x...)",
            report.unresolved_kernel_names
        );
    }
}

/// The window as JSON (`.gz` by name), written whole or not at all.
pub fn write_window(window: &TraceWindow, path: &std::path::Path) -> Result<()> {
    let out = AtomicOutput::create(path)?;
    let mut writer = out.writer()?;
    serde_json::to_writer(&mut writer, window)
        .and_then(|()| writer.flush().map_err(serde_json::Error::io))
        .with_context(|| format!("{}: cannot write", path.display()))?;
    out.commit(writer)?;
    Ok(())
}
