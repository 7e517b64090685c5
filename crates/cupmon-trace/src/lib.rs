//! cupmon's trace side: the trace-window model, the Kineto trace merge and the
//! standalone Chrome-trace export.
//!
//! - [`TraceWindow`] / [`WindowEvent`]: windows as cupmon writes them (the
//!   seed's `trace_window` dict, plus extra fields).
//! - [`MergeWindow`]: a window as the merge reads it, from JSON
//!   ([`MergeWindow::from_json`]) or from a [`TraceWindow`].
//! - [`merge_files`]: the seed's `merge_trace_window_into_chrome_trace`, streamed.
//! - [`export_window`]: a standalone Kineto-style trace of one window.
//! - [`filter_window`]: the companion monitor's window filtering.

mod api_names;
pub mod compare;
mod error;
mod export;
mod filter;
mod json;
mod merge;
mod output;
mod window;

pub use api_names::{cbids_named, ApiDomain, DRIVER_NOISE, RUNTIME_BLOCKLIST};
pub use error::TraceError;
pub use export::{export_window, ExportOptions};
pub use filter::filter_window;
/// The merge's JSON stages, for `bench/json` only.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use merge::internals;
pub use merge::{
    default_base_ns, merge_files, trimester_floor_ns, MergeOptions, MergeProgress, MergeStats,
    MergeWindow, WindowSource, DEFAULT_MAX_EVENT_BYTES, TRIMESTER_SECONDS,
};
pub use output::{is_gz, AtomicOutput, OutputWriter};
pub use window::{
    overhead_kind_name, ApiEvent, CudaEventEvent, CupmonInfo, ExternalCorrelationEvent, GpuPlace,
    KernelEvent, MemcpyEvent, MemsetEvent, OverheadEvent, SyncEvent, TraceWindow, WindowEvent,
};
