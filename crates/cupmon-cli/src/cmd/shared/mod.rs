//! Helpers more than one subcommand uses (those only one uses live in that
//! subcommand's own folder, e.g. `run/`, `stats/`).

pub mod busy_report;
pub mod collective_report;
pub mod dump_arg;
pub mod output_check;
pub mod trace_written;
pub mod window_trace;
pub mod worker_report;
