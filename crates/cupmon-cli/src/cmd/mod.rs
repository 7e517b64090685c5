//! One module per subcommand; each returns the process exit code.

mod collective_report;
pub mod combine;
pub mod decode;
pub mod demo;
mod dump_arg;
pub mod export;
pub mod export_parquet;
pub mod merge;
mod output_check;
pub mod run;
mod run_signal;
mod run_summary;
pub mod sql;
pub mod stats;
pub mod status;
mod timeline_report;
pub mod window;
mod worker_report;

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use cupmon_trace::{export_window, writes_in_place, ExportOptions, MergeWindow};

pub use dump_arg::{check_dump_dir, dumps_in};
pub use output_check::{check_output, Input};

/// Write `window` as a standalone trace at `output` and say so.
pub fn export_trace(
    window: &MergeWindow,
    output: &Path,
    trace_name: Option<String>,
    exact: bool,
) -> Result<()> {
    let options = ExportOptions {
        trace_name,
        device_properties_json: None,
        exact,
    };
    let stats = export_window(window, output, &options)?;
    print_trace_written(output, stats.events_written);
    Ok(())
}

/// The closing line of every command that writes a trace.
pub fn print_trace_written(path: &Path, events: u64) {
    say_written(
        path,
        &format!(
            "wrote {} ({events} events); open it in https://ui.perfetto.dev",
            path.display()
        ),
    );
}

/// A closing line goes to stdout, unless the output itself went to a
/// stream (`-`, a pipe, a device): then to stderr, so it never mixes with
/// the data. The work is done: a closed stdout (`| head`) is no failure.
pub fn say_written(output: &Path, line: &str) {
    if writes_in_place(output) {
        eprintln!("{line}");
    } else {
        let _ = writeln!(std::io::stdout(), "{line}");
    }
}

/// The CPU trace is a pipe or a FIFO: the merge copies it (it reads it twice).
pub fn note_if_spooled(cpu: &Path) {
    if cupmon_trace::needs_spool(cpu) {
        eprintln!(
            "cupmon: note: {} is not a regular file (a pipe, FIFO or device); the merge reads \
             its CPU trace twice, so it is first copied to a temporary file (removed at the end)",
            cpu.display()
        );
    }
}
