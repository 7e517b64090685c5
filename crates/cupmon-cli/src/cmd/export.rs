//! `cupmon export`: one window as a standalone trace.

use anyhow::Result;
use cupmon_trace::{export_window, ExportOptions, MergeWindow};

use super::{check_output, print_trace_written, read_input};
use crate::cli::ExportArgs;

pub fn run(args: &ExportArgs) -> Result<i32> {
    check_output(&args.output, &[&args.window])?;
    let window = MergeWindow::from_json(
        &read_input(&args.window)?,
        &args.window.display().to_string(),
    )?;
    let stats = export_window(
        &window,
        &args.output,
        &ExportOptions {
            trace_name: args.trace_name.clone(),
            device_properties_json: None,
        },
    )?;
    print_trace_written(&args.output, stats.events_written);
    Ok(0)
}
