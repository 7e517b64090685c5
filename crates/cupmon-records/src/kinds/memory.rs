//! MEMORY2: device memory allocations and frees, `CUpti_ActivityMemory3` (12.0) ..
//! `Memory4` (12.6+). What torch.profiler's `profile_memory` shows, from the driver.

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// One allocation or release of memory.
    MemoryRecord = "memory2", kinds [MEMORY2],
    structs [
        18 => "CUpti_ActivityMemory3" / 120,
        24 => "CUpti_ActivityMemory4" / 128,
    ],
    timestamps [timestamp],
    fields {
        kind: ActivityKind = "kind" @ 0,
        /// `CUpti_ActivityMemoryOperationType`: 1 = allocation, 2 = release.
        operation: u32 = "memoryOperationType" @ 4,
        /// `CUpti_ActivityMemoryKind` (1 = pageable, 2 = pinned, 3 = device, 4 = array,
        /// 5 = managed, 6 = device static, 7 = managed static).
        memory_kind: u32 = "memoryKind" @ 8,
        correlation_id: u32 = "correlationId" @ 12,
        address: u64 = "address" @ 16,
        bytes: u64 = "bytes" @ 24,
        timestamp: u64 = "timestamp" @ 32,
        /// Program counter of the allocation call (0 unless CUPTI was asked for it).
        pc: u64 = "PC" @ 40,
        process_id: u32 = "processId" @ 48,
        device_id: u32 = "deviceId" @ 52,
        context_id: u32 = "contextId" @ 56,
        stream_id: u32 = "streamId" @ 60,
        /// CUPTI's `const char *name` of a named variable (a pointer into the process).
        name_ptr: u64 = "name" @ 64,
        /// 1 for stream-ordered (`cudaMallocAsync`) operations.
        is_async: u32 = "isAsync" @ 72,
        /// `CUpti_ActivityMemoryPoolType` of the pool it came from (0 = none, 1 = local,
        /// 2 = imported).
        pool_type: u32 = "memoryPoolConfig.memoryPoolType" @ 80,
        pool_address: u64 = "memoryPoolConfig.address" @ 88,
        pool_release_threshold: u64 = "memoryPoolConfig.releaseThreshold" @ 96,
        /// The pool's size (a union with the importing process id for imported pools).
        pool_size: u64 = "memoryPoolConfig.pool.size" @ 104,
        pool_utilized_size: u64 = "memoryPoolConfig.utilizedSize" @ 112,
        /// 12.6+: CUPTI's `const char *source` (a pointer into the process).
        source_ptr: u64 = "source" @ 120,
    }
}

impl MemoryRecord {
    pub const ALLOCATION: u32 = 1;
    pub const RELEASE: u32 = 2;

    pub fn is_allocation(&self) -> bool {
        self.operation == Self::ALLOCATION
    }
}

impl ActivityRecord for MemoryRecord {
    fn instant(&self) -> Option<u64> {
        Some(self.timestamp)
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
