//! MEMORY_POOL operations: cupmon's `gpu_memory_pool` window entries, shown in
//! complete traces as an instant per operation and a counter of each pool's size.

use cupmon_records::MemoryPoolRecord;
use serde::{Deserialize, Serialize};

/// A memory pool created (`operation` 1), destroyed (2) or trimmed (3).
/// Fields other than the identity, the time and the operation default when a
/// window written by hand leaves them out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPoolEvent {
    pub device_id: u32,
    #[serde(default)]
    pub process_id: u32,
    #[serde(default)]
    pub correlation_id: u32,
    pub timestamp_ns: u64,
    pub operation: u32,
    #[serde(default)]
    pub pool_type: u32,
    pub address: u64,
    #[serde(default)]
    pub size: u64,
    #[serde(default)]
    pub release_threshold: u64,
    #[serde(default)]
    pub utilized_size: u64,
    #[serde(default)]
    pub min_bytes_to_keep: u64,
    #[serde(default)]
    pub is_managed_pool: bool,
    /// `[memory pool] created` and so on.
    #[serde(default)]
    pub name: String,
}

impl From<&MemoryPoolRecord> for MemoryPoolEvent {
    fn from(r: &MemoryPoolRecord) -> Self {
        MemoryPoolEvent {
            device_id: r.device_id,
            process_id: r.process_id,
            correlation_id: r.correlation_id,
            timestamp_ns: r.timestamp,
            operation: r.operation,
            pool_type: r.pool_type,
            address: r.address,
            size: r.size,
            release_threshold: r.release_threshold,
            utilized_size: r.utilized_size,
            min_bytes_to_keep: r.min_bytes_to_keep,
            is_managed_pool: r.is_managed_pool != 0,
            name: format!("[memory pool] {}", r.operation_name()),
        }
    }
}
