//! The `cupmon` command's integration tests, one binary (ripgrep's layout): bad
//! input, the regressions of the I/O issue, and `cupmon run` / `window` / `status`
//! end to end against the fake libcupti, and the end of a program under `cupmon run`.

mod bad_input;
mod regression;
mod run_exit;
mod run_fake;
mod util;
