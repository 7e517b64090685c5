//! `cupmon export`: one window as a standalone trace.

use anyhow::Result;
use cupmon_trace::{export_window, ExportOptions, MergeWindow};

use super::{check_output, print_trace_written};
use crate::cli::ExportArgs;

pub fn run(args: &ExportArgs) -> Result<i32> {
    check_output(&args.output, &[&args.window])?;
    let window = MergeWindow::read(&args.window)?;
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
