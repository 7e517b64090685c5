//! Device memory: the allocations made through `cupmonFakeMalloc` that are
//! still live, and the MEMORY2 and MEMORY_POOL records of the allocation and
//! pool calls, filled as CUPTI fills them.

use std::collections::HashMap;

use cupmon_fake_cupti_abi::default_pool_address;
use cupmon_records::{ActivityKind, MemoryPoolRecord, MemoryRecord, Record};

use crate::cupti_types::{MEMORY_KIND_DEVICE, MEMORY_POOL_TYPE_LOCAL};

/// One memory call and its arguments.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MemoryCall {
    Malloc {
        device: u32,
        bytes: u64,
        address: u64,
        is_async: bool,
        stream_id: u32,
    },
    Free {
        device: u32,
        address: u64,
        is_async: bool,
        stream_id: u32,
    },
    Pool {
        operation: u32,
        device: u32,
        address: u64,
        size: u64,
        min_bytes_to_keep: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Live {
    bytes: u64,
    /// Stream-ordered: it came from the device's default pool.
    from_pool: bool,
}

/// The live allocations and what the default pools hold.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    live: HashMap<(u32, u64), Live>,
    /// Bytes of live stream-ordered allocations per device: its default pool's
    /// use, and its size too (the fake's pools keep no spare memory).
    pool_used: HashMap<u32, u64>,
}

impl Memory {
    pub fn is_live(&self, device: u32, address: u64) -> bool {
        self.live.contains_key(&(device, address))
    }

    pub fn live_count(&self) -> u64 {
        self.live.len() as u64
    }

    pub fn clear(&mut self) {
        *self = Memory::default();
    }

    /// Applies `call` (an allocation exists whether or not it is recorded) and
    /// returns its record if its kind is `enabled`.
    pub fn apply(
        &mut self,
        call: MemoryCall,
        enabled: impl Fn(ActivityKind) -> bool,
        correlation_id: u32,
        timestamp: u64,
    ) -> Option<Record> {
        let base = |device: u32, stream_id: u32, is_async: bool| MemoryRecord {
            kind: ActivityKind::MEMORY2,
            memory_kind: MEMORY_KIND_DEVICE,
            correlation_id,
            timestamp,
            process_id: std::process::id(),
            device_id: device,
            context_id: 1,
            stream_id,
            is_async: u32::from(is_async),
            ..MemoryRecord::default()
        };
        let memory = match call {
            MemoryCall::Malloc {
                device,
                bytes,
                address,
                is_async,
                stream_id,
            } => {
                let from_pool = is_async;
                self.live
                    .insert((device, address), Live { bytes, from_pool });
                if from_pool {
                    *self.pool_used.entry(device).or_default() += bytes;
                }
                let record = MemoryRecord {
                    operation: MemoryRecord::ALLOCATION,
                    address,
                    bytes,
                    ..base(device, stream_id, is_async)
                };
                self.with_pool(record, from_pool)
            }
            MemoryCall::Free {
                device,
                address,
                is_async,
                stream_id,
            } => {
                let live = self.live.remove(&(device, address))?;
                if live.from_pool {
                    let used = self.pool_used.entry(device).or_default();
                    *used = used.saturating_sub(live.bytes);
                }
                let record = MemoryRecord {
                    operation: MemoryRecord::RELEASE,
                    address,
                    bytes: live.bytes,
                    ..base(device, stream_id, is_async)
                };
                self.with_pool(record, live.from_pool)
            }
            MemoryCall::Pool {
                operation,
                device,
                address,
                size,
                min_bytes_to_keep,
            } => {
                let pool = MemoryPoolRecord {
                    kind: ActivityKind::MEMORY_POOL,
                    operation,
                    pool_type: MEMORY_POOL_TYPE_LOCAL,
                    correlation_id,
                    process_id: std::process::id(),
                    device_id: device,
                    min_bytes_to_keep,
                    address,
                    size,
                    timestamp,
                    ..MemoryPoolRecord::default()
                };
                return enabled(ActivityKind::MEMORY_POOL).then_some(Record::MemoryPool(pool));
            }
        };
        enabled(ActivityKind::MEMORY2).then_some(Record::Memory(memory))
    }

    /// Fills in the device's default pool, after the operation, for an
    /// allocation that came from it.
    fn with_pool(&self, mut record: MemoryRecord, from_pool: bool) -> MemoryRecord {
        if from_pool {
            let used = self.pool_used.get(&record.device_id).copied().unwrap_or(0);
            record.pool_type = MEMORY_POOL_TYPE_LOCAL;
            record.pool_address = default_pool_address(record.device_id);
            record.pool_size = used;
            record.pool_utilized_size = used;
        }
        record
    }
}
