//! The `cupmon` command's integration tests, one binary (ripgrep's layout): bad
//! input, the regressions of the I/O issue, `export-parquet` and `sql`, and `cupmon run` / `window` / `status`
//! end to end against the fake libcupti.

mod bad_input;
mod export_parquet;
mod regression;
mod run_fake;
mod util;
