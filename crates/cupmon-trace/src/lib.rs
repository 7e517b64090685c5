//! cupmon's trace side: records become trace-window events, windows are filtered and
//! merged into torch.profiler (Kineto) traces or exported as traces of their own.
//!
//! - [`WindowEvent`] (one file per kind under `kinds/`) and [`TraceWindow`]: windows
//!   as cupmon writes them (PyTorch's `trace_window` dict, plus extra fields);
//!   [`decode_dump_to_window`]: a whole dump as a window; [`decode_slice_to_window`]: a
//!   time slice of one; [`write_window_stream`]: the same window written while the
//!   dump is read (memory flat in the dump's length).
//! - [`MergeWindow`]: a window as the merge reads it, from JSON
//!   ([`MergeWindow::from_json`]) or from a [`TraceWindow`].
//! - [`merge_files`]: PyTorch's `merge_trace_window_into_chrome_trace`, streamed.
//! - [`export_window`]: a standalone Kineto-style trace of one window;
//!   [`DumpExport`]: the same trace of a dump (or slice) in two streamed passes.
//! - [`TraceFormat`]: every trace is written as Chrome JSON or, for outputs
//!   named `.pftrace` (`.pftrace.gz`) or when asked, as a Perfetto protobuf
//!   trace with the same content: the writers give typed trace events
//!   (`event.rs`) to a sink of either format (`trace_sink.rs` decides,
//!   `chrome_events.rs` and `pftrace/` write).
//! - [`filter_window`]: the companion monitor's window filtering.
//! - [`AtomicOutput`]: a trace file (`cupmon-files`' atomic output, gzip by name).
//! - [`kernel_occupancy`]: Kineto's `blocks per SM`, `warps per SM` and
//!   `est. achieved occupancy %` of a kernel.

mod chrome_events;
mod combine;
mod error;
mod event;
mod export;
mod format;
mod from_records;
mod json;
mod kinds_out;
mod merge;
mod occupancy;
mod out;
mod output;
mod pftrace;
mod trace_sink;
mod window_stream;

// The window model is cupmon-window's (records + serde only, so that the monitor and
// the injection library link no renderer); its users here reach it as before.
use cupmon_window::kinds;
pub use cupmon_window::{
    filter_window, is_registered, overhead_kind_name, requires_flow, ApiEvent, ClockAlignment,
    CpuAnnotation, CpuAnnotationKind, CudaEventEvent, CupmonInfo, DistributedInfo,
    ExternalCorrelationEvent, GpuPlace, KernelEvent, MemcpyEvent, MemoryEvent, MemoryPoolEvent,
    MemsetEvent, OffClockEvents, OverheadEvent, SliceInfo, SyncEvent, TraceWindow, WindowEvent,
    DRIVER_NOISE, RUNTIME_BLOCKLIST,
};

pub use combine::{
    combine_traces, combine_traces_as, CombineStats, NumberedInput, RankCollectives, RankSkew,
    RankSpan,
};
pub use error::TraceError;
pub use export::{export_window, ExportOptions};
pub use format::{is_pftrace_path, OutputName, TraceFormat};
pub use from_records::{decode_dump_to_window, decode_slice_to_window, decode_to_window};
/// The merge's JSON stages, for `bench/json` only.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use merge::internals;
pub use merge::{
    default_base_ns, merge_files, merge_files_strict, trimester_floor_ns, DumpExport,
    DumpExportStats, MergeOptions, MergeProgress, MergeStats, MergeWindow, UntimedGpuOps,
    WindowSource, DEFAULT_MAX_EVENT_BYTES, TRIMESTER_SECONDS,
};
pub use occupancy::{
    kernel_occupancy, kineto_float_text, BlockLimits, DeviceLimits, LaunchConfig, Occupancy,
};
pub use out::{Arg, TraceOut};
pub use output::{is_gz, AtomicOutput, OutputWriter};
pub use pftrace::PftraceStats;
pub use window_stream::{write_window_stream, StreamedWindow};
