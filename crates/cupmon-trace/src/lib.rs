//! cupmon's trace side: records become trace-window events, windows are filtered and
//! merged into torch.profiler (Kineto) traces or exported as traces of their own.
//!
//! - [`WindowEvent`] (one file per kind under `kinds/`) and [`TraceWindow`]: windows
//!   as cupmon writes them (PyTorch's `trace_window` dict, plus extra fields);
//!   [`decode_dump_to_window`]: a whole dump as a window; [`decode_slice_to_window`]: a
//!   time slice of one.
//! - [`MergeWindow`]: a window as the merge reads it, from JSON
//!   ([`MergeWindow::from_json`]) or from a [`TraceWindow`].
//! - [`merge_files`]: PyTorch's `merge_trace_window_into_chrome_trace`, streamed.
//! - [`export_window`]: a standalone Kineto-style trace of one window.
//! - [`filter_window`]: the companion monitor's window filtering.
//! - [`remove_live_temp_files`]: for a signal handler, the temporary files
//!   (beside outputs, copies of piped inputs) that would stay behind.
//! - [`kernel_occupancy`]: Kineto's `blocks per SM`, `warps per SM` and
//!   `est. achieved occupancy %` of a kernel.

mod api_rules;
mod combine;
mod error;
mod export;
mod filter;
mod from_records;
mod json;
mod kinds;
mod merge;
mod occupancy;
mod out;
mod output;
mod spool;
mod temp_files;
mod window;

pub use api_rules::{is_registered, requires_flow, DRIVER_NOISE, RUNTIME_BLOCKLIST};
pub use combine::{combine_traces, CombineStats, RankCollectives, RankSkew};
pub use error::TraceError;
pub use export::{export_window, ExportOptions};
pub use filter::filter_window;
pub use from_records::{decode_dump_to_window, decode_slice_to_window, decode_to_window};
pub use kinds::{
    overhead_kind_name, ApiEvent, CudaEventEvent, ExternalCorrelationEvent, GpuPlace, KernelEvent,
    MemcpyEvent, MemoryEvent, MemoryPoolEvent, MemsetEvent, OverheadEvent, SyncEvent, WindowEvent,
};
/// The merge's JSON stages, for `bench/json` only.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use merge::internals;
pub use merge::{
    default_base_ns, merge_files, merge_files_strict, trimester_floor_ns, MergeOptions,
    MergeProgress, MergeStats, MergeWindow, WindowSource, DEFAULT_MAX_EVENT_BYTES,
    TRIMESTER_SECONDS,
};
pub use occupancy::{
    kernel_occupancy, kineto_float_text, BlockLimits, DeviceLimits, LaunchConfig, Occupancy,
};
pub use out::{Arg, TraceOut};
pub use output::{is_gz, resolve_links, writes_in_place, AtomicOutput, OutputWriter, STDOUT_NAME};
pub use spool::needs_spool;
pub use temp_files::{create_live_temp, remove_live_temp_files, LiveTemp};
pub use window::{CupmonInfo, DistributedInfo, SliceInfo, TraceWindow};
