//! `cupmon merge`: a trace window into a torch.profiler CPU trace.

use anyhow::Result;
use cupmon_trace::{merge_files_strict, MergeOptions, MergeProgress, WindowSource};

use super::{check_output, note_if_spooled, print_written, Input};
use crate::cli::MergeArgs;
use crate::progress::Progress;

pub fn run(args: &MergeArgs) -> Result<i32> {
    check_output(
        &args.output,
        &[Input::File(&args.cpu), Input::File(&args.window)],
    )?;
    super::check_output_name(&args.output, super::Writes::Trace)?;
    note_if_spooled(&args.cpu);
    let size = std::fs::metadata(&args.cpu)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |m| m.len());
    let mut progress = Progress::bytes("reading the CPU trace", size);
    let stats = merge_files_strict(
        &args.cpu,
        WindowSource::File(&args.window),
        &args.output,
        &MergeOptions {
            trace_name: args.trace_name.clone(),
            exact: args.exact,
            max_event_bytes: args.max_event_size,
            format: args.format,
        },
        &mut |p| match p {
            MergeProgress::Scanned(done) => progress.update(done),
        },
    )?;
    progress.finish();
    eprintln!(
        "merged {} window events into {} CPU events",
        stats.window_events, stats.cpu_events_kept
    );
    print_written(&args.output, &stats);
    Ok(0)
}
