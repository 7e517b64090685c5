//! cupmon's trace side: the trace-window model, the Kineto trace merge and the
//! standalone Chrome-trace export.

mod window;

pub use window::{
    overhead_kind_name, ApiEvent, CudaEventEvent, CupmonInfo, ExternalCorrelationEvent, GpuPlace,
    KernelEvent, MemcpyEvent, MemsetEvent, OverheadEvent, SyncEvent, TraceWindow, WindowEvent,
};

mod api_names;

pub use api_names::{cbids_named, ApiDomain, DRIVER_NOISE, RUNTIME_BLOCKLIST};
