//! Host-side waits: PyTorch's `cuda_sync` window entries.

use cupmon_records::SyncRecord;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl From<&SyncRecord> for SyncEvent {
    fn from(r: &SyncRecord) -> Self {
        SyncEvent {
            sync_type: r.sync_type,
            start_ns: r.start,
            end_ns: r.end,
            correlation_id: r.correlation_id,
            context_id: r.context_id,
            stream_id: r.stream_id,
            event_id: r.cuda_event_id,
            cuda_event_sync_id: r.cuda_event_sync_id,
            return_value: r.return_value,
            name: format!("sync_{}", r.sync_type),
        }
    }
}
