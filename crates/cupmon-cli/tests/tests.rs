//! The `cupmon` command's integration tests, one binary (ripgrep's layout): bad
//! input, the regressions of the I/O issue, `cupmon run` / `window` / `status` end to
//! end against the fake libcupti, the end of a program under `cupmon run`, NCCL
//! collectives in `stats` and traces, time slices and `stats --timeline`, and
//! `export-parquet` and `sql`.

mod bad_input;
mod collectives;
mod export_parquet;
mod regression;
mod run_exit;
mod run_fake;
mod slice;
mod timeline;
mod util;
