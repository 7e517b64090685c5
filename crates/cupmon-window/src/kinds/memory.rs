//! MEMORY2 allocations and frees: cupmon's `gpu_memory` window entries (PyTorch's
//! monitor has none), shown in complete traces as torch.profiler's `profile_memory`
//! shows allocations: a `[memory]` instant per operation with the same arguments, and
//! a counter of the bytes held per device.

use cupmon_records::MemoryRecord;
use serde::{Deserialize, Serialize};

/// One allocation (`operation` 1) or release (2) of device or host memory.
/// Fields other than the identity, the time and the operation default when a
/// window written by hand leaves them out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEvent {
    pub device_id: u32,
    #[serde(default)]
    pub context_id: u32,
    #[serde(default)]
    pub stream_id: u32,
    #[serde(default)]
    pub correlation_id: u32,
    pub timestamp_ns: u64,
    pub operation: u32,
    /// `CUpti_ActivityMemoryKind` (3 = device, 2 = pinned, ...).
    #[serde(default)]
    pub memory_kind: u32,
    pub address: u64,
    pub bytes: u64,
    #[serde(default)]
    pub process_id: u32,
    #[serde(default)]
    pub is_async: bool,
    /// The memory pool it came from (`pool_type` 0 when none).
    #[serde(default)]
    pub pool_type: u32,
    #[serde(default)]
    pub pool_address: u64,
    #[serde(default)]
    pub pool_size: u64,
    #[serde(default)]
    pub pool_utilized_size: u64,
    #[serde(default)]
    pub name: String,
}

impl From<&MemoryRecord> for MemoryEvent {
    fn from(r: &MemoryRecord) -> Self {
        MemoryEvent {
            device_id: r.device_id,
            context_id: r.context_id,
            stream_id: r.stream_id,
            correlation_id: r.correlation_id,
            timestamp_ns: r.timestamp,
            operation: r.operation,
            memory_kind: r.memory_kind,
            address: r.address,
            bytes: r.bytes,
            process_id: r.process_id,
            is_async: r.is_async != 0,
            pool_type: r.pool_type,
            pool_address: r.pool_address,
            pool_size: r.pool_size,
            pool_utilized_size: r.pool_utilized_size,
            name: "[memory]".to_owned(),
        }
    }
}

impl MemoryEvent {
    pub fn is_allocation(&self) -> bool {
        self.operation == MemoryRecord::ALLOCATION
    }
}
