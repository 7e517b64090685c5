//! cupmon's trace-window model, and nothing that renders it: what the monitor and
//! the injection library (loaded into every traced program) need, without the merge,
//! the JSON writers, gzip or the Perfetto writer (those are `cupmon-trace`'s, which
//! re-exports all of this).
//!
//! - [`WindowEvent`] (one file per kind under `kinds/`) and [`TraceWindow`]: windows
//!   as cupmon writes them (PyTorch's `trace_window` dict, plus cupmon's keys:
//!   [`CupmonInfo`], [`DistributedInfo`], [`SliceInfo`], [`ClockAlignment`]).
//! - [`filter_window`], [`DRIVER_NOISE`], [`RUNTIME_BLOCKLIST`]: the companion
//!   monitor's window filtering; [`is_registered`], [`requires_flow`]: which API calls
//!   PyTorch's merge links.

mod api_rules;
mod clock_alignment;
mod cpu_annotation;
mod filter;
pub mod kinds;
mod window;

pub use api_rules::{is_registered, requires_flow, DRIVER_NOISE, RUNTIME_BLOCKLIST};
pub use clock_alignment::ClockAlignment;
pub use cpu_annotation::{rgb_hex, CpuAnnotation, CpuAnnotationKind};
pub use filter::filter_window;
pub use kinds::{
    overhead_kind_name, ApiEvent, CudaEventEvent, ExternalCorrelationEvent, GpuPlace, KernelEvent,
    MemcpyEvent, MemoryEvent, MemoryPoolEvent, MemsetEvent, OverheadEvent, SyncEvent, WindowEvent,
};
pub use window::{CupmonInfo, DistributedInfo, OffClockEvents, SliceInfo, TraceWindow};
