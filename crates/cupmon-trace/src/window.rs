//! The trace window as cupmon produces it: typed events that serialise to the
//! seed's `trace_window` dict (same `kind` names, same field names, same order),
//! followed by cupmon's extra fields (launch configuration and the like).
//!
//! Reading a window back (for the merge) goes through [`crate::MergeWindow`], which
//! accepts anything the seed accepts; this model is the writing side.

use std::collections::BTreeMap;

use serde::Serialize;

/// A trace window: GPU activity plus, while the window was open, CPU-side API
/// records and the correlation that ties them together.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceWindow {
    pub events: Vec<WindowEvent>,
    /// CUPTI activity kinds this window enabled on top of the always-on ones.
    pub extra_activities: Vec<u32>,
    /// CUSTOM1 external-correlation id -> annotation name.
    pub user_annotations: BTreeMap<u64, String>,
    /// pid -> (CUPTI opaque thread id, as int32) -> OS thread id.
    pub thread_resource_map: BTreeMap<i64, BTreeMap<i64, i64>>,
    pub start_ns: u64,
    /// What cupmon knows about the completeness of this window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cupmon: Option<CupmonInfo>,
    /// The GPUs, as Kineto's `deviceProperties` array (for exported traces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_properties: Option<serde_json::Value>,
}

/// Facts about the collection that a trace must carry so that it never looks
/// complete when it is not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CupmonInfo {
    pub version: String,
    pub dropped_records: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cupti_version: Option<u32>,
    /// Kernels whose name pointer had no entry in `kernel_names.tsv`.
    #[serde(skip_serializing_if = "is_zero")]
    pub unresolved_kernel_names: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One record of a window, tagged by the seed's `kind` names.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WindowEvent {
    Kernel(KernelEvent),
    #[serde(rename = "gpu_memcpy")]
    Memcpy(MemcpyEvent),
    #[serde(rename = "gpu_memset")]
    Memset(MemsetEvent),
    #[serde(rename = "cuda_runtime")]
    Runtime(ApiEvent),
    #[serde(rename = "cuda_driver")]
    Driver(ApiEvent),
    ExternalCorrelation(ExternalCorrelationEvent),
    Overhead(OverheadEvent),
    CudaEvent(CudaEventEvent),
    #[serde(rename = "cuda_sync")]
    Sync(SyncEvent),
}

impl WindowEvent {
    /// The seed's `kind` string for this event.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::Kernel(_) => "kernel",
            Self::Memcpy(_) => "gpu_memcpy",
            Self::Memset(_) => "gpu_memset",
            Self::Runtime(_) => "cuda_runtime",
            Self::Driver(_) => "cuda_driver",
            Self::ExternalCorrelation(_) => "external_correlation",
            Self::Overhead(_) => "overhead",
            Self::CudaEvent(_) => "cuda_event",
            Self::Sync(_) => "cuda_sync",
        }
    }

    /// Start time in ns; 0 for records without one (external correlation, CUDA events).
    pub fn start_ns(&self) -> u64 {
        match self {
            Self::Kernel(e) => e.start_ns,
            Self::Memcpy(e) => e.start_ns,
            Self::Memset(e) => e.start_ns,
            Self::Runtime(e) | Self::Driver(e) => e.start_ns,
            Self::Overhead(e) => e.start_ns,
            Self::Sync(e) => e.start_ns,
            Self::ExternalCorrelation(_) | Self::CudaEvent(_) => 0,
        }
    }

    /// End time in ns; 0 for records without one.
    pub fn end_ns(&self) -> u64 {
        match self {
            Self::Kernel(e) => e.end_ns,
            Self::Memcpy(e) => e.end_ns,
            Self::Memset(e) => e.end_ns,
            Self::Runtime(e) | Self::Driver(e) => e.end_ns,
            Self::Overhead(e) => e.end_ns,
            Self::Sync(e) => e.end_ns,
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

/// Where a GPU record ran; the leading fields of kernel, memcpy and memset events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GpuPlace {
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub correlation_id: u32,
    pub graph_node_id: u64,
    pub graph_id: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelEvent {
    #[serde(flatten)]
    pub gpu: GpuPlace,
    pub start_ns: u64,
    pub end_ns: u64,
    pub annotation: Option<String>,
    /// Demangled kernel name (or `kernel@0x...` when the name pointer was not resolved).
    pub name: String,
    // cupmon's extra fields, after the seed's.
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub cluster: [u32; 3],
    pub registers_per_thread: u16,
    pub static_shared_memory: i32,
    pub dynamic_shared_memory: i32,
    pub queued_ns: u64,
    pub submitted_ns: u64,
    pub completed_ns: u64,
    pub launch_type: u8,
    pub channel_id: u32,
    pub channel_type: u32,
    pub grid_id: i64,
    /// False when the kernel-name pointer had no entry in the dump's name table.
    pub name_resolved: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemcpyEvent {
    #[serde(flatten)]
    pub gpu: GpuPlace,
    pub runtime_correlation_id: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: u64,
    pub copy_kind: u32,
    pub src_kind: u32,
    pub dst_kind: u32,
    pub flags: u32,
    pub annotation: Option<String>,
    pub name: String,
    pub channel_id: u32,
    pub channel_type: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemsetEvent {
    #[serde(flatten)]
    pub gpu: GpuPlace,
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: u64,
    pub value: u32,
    pub memory_kind: u32,
    pub flags: u32,
    pub annotation: Option<String>,
    pub name: String,
    pub channel_id: u32,
    pub channel_type: u32,
}

/// A runtime or driver API call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiEvent {
    pub cbid: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub process_id: u32,
    pub thread_id: u32,
    pub correlation_id: u32,
    pub return_value: u32,
    /// `cbid_N`, as the seed's monitor writes it; the merge names calls from its own table.
    pub name: String,
    /// The call's name from cupmon's callback-id table (extra field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_name: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExternalCorrelationEvent {
    pub external_kind: u32,
    pub external_id: u64,
    pub correlation_id: u32,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OverheadEvent {
    pub overhead_kind: u32,
    pub object_kind: u32,
    pub object_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub correlation_id: u32,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CudaEventEvent {
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub event_id: u32,
    pub correlation_id: u32,
    pub device_timestamp_ns: u64,
    pub cuda_event_sync_id: u64,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncEvent {
    pub sync_type: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub correlation_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub event_id: u32,
    pub cuda_event_sync_id: u64,
    pub return_value: u32,
    pub name: String,
}

/// CUPTI's overhead-kind names, as the seed's monitor writes them.
pub fn overhead_kind_name(kind: u32) -> String {
    let known = match kind {
        0 => "Unknown",
        1 => "Driver Compiler",
        0x1_0000 => "Buffer Flush",
        0x2_0000 => "Instrumentation",
        0x3_0000 => "Resource",
        0x4_0000 => "Runtime Triggered Module Loading",
        0x5_0000 => "Lazy Function Loading",
        0x6_0000 => "Command Buffer Full",
        0x7_0000 => "Activity Buffer Request",
        0x8_0000 => "UVM Activity Init",
        _ => return format!("overhead_{kind}"),
    };
    known.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_serialises_in_seed_field_order() {
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
    }

    #[test]
    fn overhead_names_match_the_seed_monitor() {
        assert_eq!(overhead_kind_name(0x7_0000), "Activity Buffer Request");
        assert_eq!(overhead_kind_name(12), "overhead_12");
    }
}
