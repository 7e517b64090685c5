//! cupmon-trace's integration tests, one binary (ripgrep's layout): windows decoded
//! from real H200 dumps, the merge against its golden outputs and, differentially,
//! against PyTorch's `merge_trace_window_into_chrome_trace`, the rules Perfetto
//! needs, and the kernel occupancy against CUDA's own calculator.

mod common;
mod differential;
mod from_dump;
mod gen;
mod golden;
mod limits;
mod occupancy;
mod perfetto_rules;
mod pftrace;
mod slice_annotations;
mod stream;
mod untimed;
mod window_file;
