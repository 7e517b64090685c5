//! cupmon-trace's integration tests, one binary (ripgrep's layout): windows decoded
//! from real H200 dumps, the merge against its golden outputs and, differentially,
//! against PyTorch's `merge_trace_window_into_chrome_trace`, and the rules Perfetto
//! needs.

mod common;
mod differential;
mod from_dump;
mod gen;
mod golden;
mod perfetto_rules;
