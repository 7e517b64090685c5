//! One module per subcommand; each returns the process exit code.

pub mod combine;
pub mod decode;
pub mod demo;
pub mod export;
pub mod merge;
pub mod run;
mod run_signal;
mod run_summary;
pub mod stats;
pub mod status;
pub mod window;
mod worker_report;

use std::path::Path;

use anyhow::Result;
use cupmon_trace::{export_window, ExportOptions, MergeWindow};

use crate::exit::BadInput;

/// Check an output path before the work starts: not a directory, not one of
/// the inputs (which the rename at the end would replace), in a directory
/// that exists.
pub fn check_output(output: &Path, inputs: &[&Path]) -> Result<()> {
    if output.is_dir() {
        return Err(BadInput(format!(
            "{}: is a directory; give a file name",
            output.display()
        ))
        .into());
    }
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(BadInput(format!(
                "{}: the directory {} does not exist",
                output.display(),
                parent.display()
            ))
            .into());
        }
    }
    if let Ok(out) = output.canonicalize() {
        for input in inputs {
            if input.canonicalize().is_ok_and(|i| i == out) {
                return Err(BadInput(format!(
                    "{}: the output would replace an input; choose another name",
                    output.display()
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// The closing line of every command that writes a trace.
/// Write `window` as a standalone trace at `output` and say so.
pub fn export_trace(window: &MergeWindow, output: &Path, trace_name: Option<String>) -> Result<()> {
    let options = ExportOptions {
        trace_name,
        device_properties_json: None,
    };
    let stats = export_window(window, output, &options)?;
    print_trace_written(output, stats.events_written);
    Ok(())
}

pub fn print_trace_written(path: &Path, events: u64) {
    println!(
        "wrote {} ({events} events); open it in https://ui.perfetto.dev",
        path.display()
    );
}
