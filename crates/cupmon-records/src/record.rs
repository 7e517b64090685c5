//! Typed activity records: every field of CUPTI's structs that a user could want, in
//! CUPTI's units (timestamps in ns on CUPTI's clock, Unix-epoch by default). A field
//! that the buffer's CUPTI version does not have reads as 0.

use cupmon_trace::ApiDomain;

use crate::ActivityKind;

/// One decoded activity record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Kernel(KernelRecord),
    Memcpy(MemcpyRecord),
    Memset(MemsetRecord),
    /// A runtime or driver API call.
    Api(ApiRecord),
    ExternalCorrelation(ExternalCorrelationRecord),
    Overhead(OverheadRecord),
    CudaEvent(CudaEventRecord),
    Synchronization(SyncRecord),
}

impl Record {
    /// The CUPTI activity kind this record was (or will be) written as.
    pub fn kind(&self) -> ActivityKind {
        match self {
            Self::Kernel(k) if k.concurrent => ActivityKind::ConcurrentKernel,
            Self::Kernel(_) => ActivityKind::Kernel,
            Self::Memcpy(_) => ActivityKind::Memcpy,
            Self::Memset(_) => ActivityKind::Memset,
            Self::Api(a) => match a.domain {
                ApiDomain::Runtime => ActivityKind::Runtime,
                ApiDomain::Driver => ActivityKind::Driver,
            },
            Self::ExternalCorrelation(_) => ActivityKind::ExternalCorrelation,
            Self::Overhead(_) => ActivityKind::Overhead,
            Self::CudaEvent(_) => ActivityKind::CudaEvent,
            Self::Synchronization(_) => ActivityKind::Synchronization,
        }
    }

    /// The correlation id (CUPTI's link between an API call and the GPU work it caused).
    pub fn correlation_id(&self) -> u32 {
        match self {
            Self::Kernel(r) => r.correlation_id,
            Self::Memcpy(r) => r.correlation_id,
            Self::Memset(r) => r.correlation_id,
            Self::Api(r) => r.correlation_id,
            Self::ExternalCorrelation(r) => r.correlation_id,
            Self::Overhead(r) => r.correlation_id,
            Self::CudaEvent(r) => r.correlation_id,
            Self::Synchronization(r) => r.correlation_id,
        }
    }

    /// `(start, end)` in ns for records that span time; `None` for external correlation
    /// and CUDA event records.
    pub fn span(&self) -> Option<(u64, u64)> {
        match self {
            Self::Kernel(r) => Some((r.start, r.end)),
            Self::Memcpy(r) => Some((r.start, r.end)),
            Self::Memset(r) => Some((r.start, r.end)),
            Self::Api(r) => Some((r.start, r.end)),
            Self::Overhead(r) => Some((r.start, r.end)),
            Self::Synchronization(r) => Some((r.start, r.end)),
            Self::ExternalCorrelation(_) | Self::CudaEvent(_) => None,
        }
    }
}

/// `CUpti_ActivityKernel*` (KERNEL or CONCURRENT_KERNEL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelRecord {
    /// CONCURRENT_KERNEL (10) rather than the serialised KERNEL (3).
    pub concurrent: bool,
    /// `cacheConfig.both`: requested (low 4 bits) and executed (high 4 bits) cache config.
    pub cache_config: u8,
    pub shared_memory_config: u8,
    pub registers_per_thread: u16,
    pub partitioned_global_cache_requested: u32,
    pub partitioned_global_cache_executed: u32,
    pub start: u64,
    /// 0 for a kernel still running at a forced flush.
    pub end: u64,
    pub completed: u64,
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub static_shared_memory: i32,
    pub dynamic_shared_memory: i32,
    pub local_memory_per_thread: u32,
    pub local_memory_total: u32,
    pub correlation_id: u32,
    pub grid_id: i64,
    /// CUPTI's `const char *name`: valid only in the recording process; resolve it with
    /// the dump's `kernel_names.tsv`.
    pub name_ptr: u64,
    pub queued: u64,
    pub submitted: u64,
    pub launch_type: u8,
    pub is_shared_memory_carveout_requested: u8,
    pub shared_memory_carveout_requested: u8,
    pub shared_memory_executed: u32,
    pub graph_node_id: u64,
    pub shmem_limit_config: u32,
    pub graph_id: u32,
    pub channel_id: u32,
    pub channel_type: u32,
    pub cluster: [u32; 3],
    pub cluster_scheduling_policy: u32,
    pub local_memory_total_v2: u64,
    pub max_potential_cluster_size: u32,
    pub max_active_clusters: u32,
    /// 13.0+.
    pub is_device_launched: u8,
    /// 13.1+.
    pub priority: i32,
    /// 13.3+.
    pub execution_model: u32,
    /// 13.4+.
    pub source_graph_id: u32,
    /// 13.4+.
    pub source_graph_node_id: u64,
}

/// `CUpti_ActivityMemcpy*`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemcpyRecord {
    /// `CUpti_ActivityMemcpyKind` (1 = HtoD, 2 = DtoH, 8 = DtoD, ...).
    pub copy_kind: u8,
    /// `CUpti_ActivityMemoryKind` of the source (1 = pageable, 2 = pinned, 3 = device, ...).
    pub src_kind: u8,
    pub dst_kind: u8,
    /// `CUpti_ActivityFlag` bits (1 = async).
    pub flags: u8,
    pub bytes: u64,
    pub start: u64,
    pub end: u64,
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub correlation_id: u32,
    pub runtime_correlation_id: u32,
    pub graph_node_id: u64,
    pub graph_id: u32,
    pub channel_id: u32,
    pub channel_type: u32,
    /// 13.0+.
    pub is_device_launched: u8,
    /// 12.8+.
    pub copy_count: u64,
    /// 13.4+.
    pub source_graph_id: u32,
    /// 13.4+.
    pub source_graph_node_id: u64,
}

/// `CUpti_ActivityMemset*`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemsetRecord {
    pub value: u32,
    pub bytes: u64,
    pub start: u64,
    pub end: u64,
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub correlation_id: u32,
    pub flags: u16,
    pub memory_kind: u16,
    pub graph_node_id: u64,
    pub graph_id: u32,
    pub channel_id: u32,
    pub channel_type: u32,
    /// 13.0+.
    pub is_device_launched: u8,
    /// 13.4+.
    pub source_graph_id: u32,
    /// 13.4+.
    pub source_graph_node_id: u64,
}

/// `CUpti_ActivityAPI`: a runtime (RUNTIME) or driver (DRIVER) call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiRecord {
    pub domain: ApiDomain,
    /// The callback id (`CUpti_runtime_api_trace_cbid` / `CUpti_driver_api_trace_cbid`).
    pub cbid: u32,
    pub start: u64,
    pub end: u64,
    pub process_id: u32,
    /// CUPTI's opaque thread id unless `cuptiSetThreadIdType(SYSTEM)` was called.
    pub thread_id: u32,
    pub correlation_id: u32,
    pub return_value: u32,
}

/// `CUpti_ActivityExternalCorrelation`: ties a correlation id to an external id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExternalCorrelationRecord {
    /// `CUpti_ExternalCorrelationKind` (4 = CUSTOM0, 5 = CUSTOM1, ...).
    pub external_kind: u32,
    pub external_id: u64,
    pub correlation_id: u32,
}

/// `CUpti_ActivityOverhead*`: time CUPTI or the driver spent on its own work.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverheadRecord {
    pub overhead_kind: u32,
    /// `CUpti_ActivityObjectKind` (1 = process, 2 = thread, 3 = device, 4 = context, 5 = stream).
    pub object_kind: u32,
    /// The raw `objectId` union: `[pid, tid, 0]` for process/thread objects,
    /// `[device, context, stream]` otherwise.
    pub object_id: [u32; 3],
    pub start: u64,
    pub end: u64,
    /// 12.3+.
    pub correlation_id: u32,
    /// 12.4+: CUPTI's `void *overheadData` (a pointer into the recording process).
    pub overhead_data: u64,
}

impl OverheadRecord {
    /// `(process id, thread id)` when the object is a process or thread.
    pub fn process_thread(&self) -> Option<(u32, u32)> {
        matches!(self.object_kind, 1 | 2).then_some((self.object_id[0], self.object_id[1]))
    }
}

/// `CUpti_ActivityCudaEvent*`: a `cudaEventRecord`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaEventRecord {
    pub correlation_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub event_id: u32,
    /// 12.8+.
    pub device_id: u32,
    /// 12.8+.
    pub device_timestamp: u64,
    /// 12.8+.
    pub cuda_event_sync_id: u64,
    /// 13.5+.
    pub graph_node_id: u64,
    /// 13.5+.
    pub graph_id: u32,
    /// 13.5+.
    pub source_graph_id: u32,
    /// 13.5+.
    pub source_graph_node_id: u64,
}

/// `CUpti_ActivitySynchronization*`: a host-side wait (event/stream/context sync).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncRecord {
    /// `CUpti_ActivitySynchronizationType` (1 = event sync, 2 = stream wait event, ...).
    pub sync_type: u32,
    pub start: u64,
    pub end: u64,
    pub correlation_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub cuda_event_id: u32,
    /// 12.8+.
    pub cuda_event_sync_id: u64,
    /// 12.8+.
    pub return_value: u32,
}
