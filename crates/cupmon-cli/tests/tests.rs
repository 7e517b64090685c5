//! The `cupmon` command's integration tests, one binary (ripgrep's layout): bad
//! input, the regressions of the I/O issue, Perfetto outputs, `cupmon run` / `window` /
//! `status` end to end against the fake libcupti, the end of a program under `cupmon run`,
//! NCCL collectives in `stats` and traces, the demo checked by values, time slices and
//! `stats --timeline`, `export-parquet` and `sql`, `report`, GPU ops without a time
//! left out of traces, NVTX ranges from a C program, `status` / `window` against hostile control peers, and the
//! repository's own documents against the code and the tree.

mod accounting;
mod autograd_seq;
mod bad_input;
mod clients;
mod collectives;
mod cupti_versions;
mod demo;
mod export_parquet;
mod first_hour;
mod hangs;
mod hostile_control;
mod hostile_files;
mod hostile_segments;
mod nvtx;
mod nvtx_cpu;
mod off_clock;
mod pftrace;
mod python_stacks;
mod regression;
mod repo_docs;
mod report;
mod run_exit;
mod run_fake;
mod slice;
mod stragglers;
mod timeline;
mod untimed;
mod util;
