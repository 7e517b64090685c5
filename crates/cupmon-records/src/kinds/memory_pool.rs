//! MEMORY_POOL: memory pool creation, trimming and destruction,
//! `CUpti_ActivityMemoryPool2` (12.x) .. `MemoryPool3` (13.0+).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// One operation on a CUDA memory pool.
    MemoryPoolRecord = "memory_pool", kinds [MEMORY_POOL],
    structs [
        18 => "CUpti_ActivityMemoryPool2" / 72,
        130_000 => "CUpti_ActivityMemoryPool3" / 80,
    ],
    timestamps [timestamp],
    fields {
        kind: ActivityKind = "kind" @ 0,
        /// `CUpti_ActivityMemoryPoolOperationType`: 1 = created, 2 = destroyed, 3 = trimmed.
        operation: u32 = "memoryPoolOperationType" @ 4,
        /// `CUpti_ActivityMemoryPoolType`: 1 = local, 2 = imported.
        pool_type: u32 = "memoryPoolType" @ 8,
        correlation_id: u32 = "correlationId" @ 12,
        process_id: u32 = "processId" @ 16,
        device_id: u32 = "deviceId" @ 20,
        /// What a trim left reserved (`cudaMemPoolTrimTo`'s argument).
        min_bytes_to_keep: u64 = "minBytesToKeep" @ 24,
        address: u64 = "address" @ 32,
        size: u64 = "size" @ 40,
        release_threshold: u64 = "releaseThreshold" @ 48,
        timestamp: u64 = "timestamp" @ 56,
        utilized_size: u64 = "utilizedSize" @ 64,
        /// 13.0+.
        is_managed_pool: u8 = "isManagedPool" @ 72,
    }
}

impl MemoryPoolRecord {
    /// CUPTI's name of the operation.
    pub fn operation_name(&self) -> &'static str {
        match self.operation {
            1 => "created",
            2 => "destroyed",
            3 => "trimmed",
            _ => "unknown",
        }
    }
}

impl ActivityRecord for MemoryPoolRecord {
    fn instant(&self) -> Option<u64> {
        Some(self.timestamp)
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
