//! `cudaEventRecord`s: PyTorch's `cuda_event` window entries.

use cupmon_records::CudaEventRecord;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl From<&CudaEventRecord> for CudaEventEvent {
    fn from(r: &CudaEventRecord) -> Self {
        CudaEventEvent {
            device_id: r.device_id,
            context_id: r.context_id,
            stream_id: r.stream_id,
            event_id: r.event_id,
            correlation_id: r.correlation_id,
            device_timestamp_ns: r.device_timestamp,
            cuda_event_sync_id: r.cuda_event_sync_id,
            name: "cuda_event".to_owned(),
        }
    }
}
