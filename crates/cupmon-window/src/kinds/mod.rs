//! Trace-window events, one file per kind: what each decoded record becomes in a
//! window (PyTorch's `trace_window` entries, same `kind` names and field order, then
//! cupmon's extra fields).
//!
//! Adding a kind: a file here with its event type and `From<&Record>`, and its line
//! in the list below and arms in the methods under it (the record side is in
//! cupmon-records' `kinds/`; how it shows in a trace, cupmon-trace's `kinds_out.rs`).

mod api;
mod cuda_event;
mod external_correlation;
mod gpu_place;
mod kernel;
mod memcpy;
mod memory;
mod memory_pool;
mod memset;
mod overhead;
mod synchronization;

pub use api::ApiEvent;
pub use cuda_event::CudaEventEvent;
pub use external_correlation::ExternalCorrelationEvent;
pub(crate) use gpu_place::gpu_place;
pub use gpu_place::GpuPlace;
pub use kernel::KernelEvent;
pub use memcpy::MemcpyEvent;
pub use memory::MemoryEvent;
pub use memory_pool::MemoryPoolEvent;
pub use memset::MemsetEvent;
pub use overhead::{overhead_kind_name, OverheadEvent};
pub use synchronization::SyncEvent;

use cupmon_records::{ApiDomain, KernelNames, Record};
use serde::{Deserialize, Serialize};

/// Declares [`WindowEvent`] over the kinds: variant, `kind` name in the window JSON,
/// event type, and how a [`Record`] becomes it.
macro_rules! window_events {
    ($($(#[$doc:meta])* $variant:ident = $kind:literal ($ty:ty),)*) => {
        /// One record of a window, tagged by PyTorch's `kind` names.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        pub enum WindowEvent {
            $($(#[$doc])* #[serde(rename = $kind)] $variant($ty),)*
        }

        impl WindowEvent {
            /// The window JSON's `kind` string for this event.
            pub fn kind_name(&self) -> &'static str {
                match self { $(Self::$variant(_) => $kind,)* }
            }
        }
    };
}

window_events! {
    Kernel = "kernel" (KernelEvent),
    Memcpy = "gpu_memcpy" (MemcpyEvent),
    Memset = "gpu_memset" (MemsetEvent),
    Runtime = "cuda_runtime" (ApiEvent),
    Driver = "cuda_driver" (ApiEvent),
    ExternalCorrelation = "external_correlation" (ExternalCorrelationEvent),
    Overhead = "overhead" (OverheadEvent),
    CudaEvent = "cuda_event" (CudaEventEvent),
    Sync = "cuda_sync" (SyncEvent),
    Memory = "gpu_memory" (MemoryEvent),
    MemoryPool = "gpu_memory_pool" (MemoryPoolEvent),
}

impl WindowEvent {
    /// The window event for one record; kernel names resolved through `names`.
    pub fn from_record(record: &Record, names: &mut KernelNames<'_>) -> Self {
        match record {
            Record::Kernel(r) => Self::Kernel(KernelEvent::from_record(r, names)),
            Record::Memcpy(r) => Self::Memcpy(r.into()),
            Record::Memset(r) => Self::Memset(r.into()),
            Record::Api(r) => match r.domain() {
                ApiDomain::Runtime => Self::Runtime(r.into()),
                ApiDomain::Driver => Self::Driver(r.into()),
            },
            Record::ExternalCorrelation(r) => Self::ExternalCorrelation(r.into()),
            Record::Overhead(r) => Self::Overhead(r.into()),
            Record::CudaEvent(r) => Self::CudaEvent(r.into()),
            Record::Synchronization(r) => Self::Sync(r.into()),
            Record::Memory(r) => Self::Memory(r.into()),
            Record::MemoryPool(r) => Self::MemoryPool(r.into()),
        }
    }

    /// Start time in ns (the instant of instant kinds); 0 for records without one
    /// (external correlation, CUDA events).
    pub fn start_ns(&self) -> u64 {
        match self {
            Self::Kernel(e) => e.start_ns,
            Self::Memcpy(e) => e.start_ns,
            Self::Memset(e) => e.start_ns,
            Self::Runtime(e) | Self::Driver(e) => e.start_ns,
            Self::Overhead(e) => e.start_ns,
            Self::Sync(e) => e.start_ns,
            Self::Memory(e) => e.timestamp_ns,
            Self::MemoryPool(e) => e.timestamp_ns,
            Self::ExternalCorrelation(_) | Self::CudaEvent(_) => 0,
        }
    }

    /// End time in ns (the instant of instant kinds); 0 for records without one.
    pub fn end_ns(&self) -> u64 {
        match self {
            Self::Kernel(e) => e.end_ns,
            Self::Memcpy(e) => e.end_ns,
            Self::Memset(e) => e.end_ns,
            Self::Runtime(e) | Self::Driver(e) => e.end_ns,
            Self::Overhead(e) => e.end_ns,
            Self::Sync(e) => e.end_ns,
            Self::Memory(e) => e.timestamp_ns,
            Self::MemoryPool(e) => e.timestamp_ns,
            Self::ExternalCorrelation(_) | Self::CudaEvent(_) => 0,
        }
    }

    pub fn correlation_id(&self) -> u32 {
        match self {
            Self::Kernel(e) => e.gpu.correlation_id,
            Self::Memcpy(e) => e.gpu.correlation_id,
            Self::Memset(e) => e.gpu.correlation_id,
            Self::Runtime(e) | Self::Driver(e) => e.correlation_id,
            Self::ExternalCorrelation(e) => e.correlation_id,
            Self::Overhead(e) => e.correlation_id,
            Self::CudaEvent(e) => e.correlation_id,
            Self::Sync(e) => e.correlation_id,
            Self::Memory(e) => e.correlation_id,
            Self::MemoryPool(e) => e.correlation_id,
        }
    }

    /// The GPU a record is of, for the kinds that name one.
    pub fn device_id(&self) -> Option<u32> {
        match self {
            Self::Kernel(e) => Some(e.gpu.device_id),
            Self::Memcpy(e) => Some(e.gpu.device_id),
            Self::Memset(e) => Some(e.gpu.device_id),
            Self::CudaEvent(e) => Some(e.device_id),
            Self::Memory(e) => Some(e.device_id),
            Self::MemoryPool(e) => Some(e.device_id),
            Self::Runtime(_)
            | Self::Driver(_)
            | Self::ExternalCorrelation(_)
            | Self::Overhead(_)
            | Self::Sync(_) => None,
        }
    }

    /// Kernels, copies and memsets: the records that run on the GPU.
    pub fn is_gpu_activity(&self) -> bool {
        matches!(self, Self::Kernel(_) | Self::Memcpy(_) | Self::Memset(_))
    }

    /// Runtime and driver API records.
    pub fn is_api(&self) -> bool {
        matches!(self, Self::Runtime(_) | Self::Driver(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_serialises_in_pytorchs_field_order() {
        let event = WindowEvent::Kernel(KernelEvent {
            gpu: GpuPlace {
                device_id: 0,
                context_id: 1,
                stream_id: 7,
                correlation_id: 42,
                graph_node_id: 0,
                graph_id: 0,
            },
            start_ns: 10,
            end_ns: 20,
            annotation: None,
            name: "k".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            cluster: [0, 0, 0],
            registers_per_thread: 16,
            static_shared_memory: 0,
            dynamic_shared_memory: 0,
            queued_ns: 0,
            submitted_ns: 0,
            completed_ns: 20,
            launch_type: 0,
            channel_id: 0,
            channel_type: 0,
            grid_id: 3,
            name_resolved: true,
        });
        let json = serde_json::to_string(&event).expect("serialise");
        assert!(json.starts_with(
            r#"{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":42,"graph_node_id":0,"graph_id":0,"start_ns":10,"end_ns":20,"annotation":null,"name":"k","grid":[1,1,1]"#
        ));
        let back: WindowEvent = serde_json::from_str(&json).expect("read back");
        assert_eq!(back, event);
    }
}
