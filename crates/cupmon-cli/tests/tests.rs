//! The `cupmon` command's integration tests, one binary (ripgrep's layout): bad
//! input, the regressions of the I/O issue, Perfetto outputs, `cupmon run` / `window` /
//! `status` end to end against the fake libcupti, the end of a program under `cupmon run`,
//! NCCL collectives in `stats` and traces, the demo checked by values, time slices and
//! `stats --timeline`, `export-parquet` and `sql`, `report`, and GPU ops without a time
//! left out of traces.

mod bad_input;
mod collectives;
mod demo;
mod export_parquet;
mod hostile_segments;
mod pftrace;
mod regression;
mod report;
mod run_exit;
mod run_fake;
mod slice;
mod timeline;
mod untimed;
mod util;
