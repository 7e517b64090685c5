//! The `cupmon` command's integration tests, one binary (ripgrep's layout): bad
//! input, the regressions of the I/O issue, Perfetto outputs, and `cupmon run` / `window` / `status`
//! end to end against the fake libcupti.

mod bad_input;
mod pftrace;
mod regression;
mod run_fake;
mod util;
