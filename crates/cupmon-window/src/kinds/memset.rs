//! Memsets: PyTorch's `gpu_memset` window entries.

use cupmon_records::MemsetRecord;
use serde::{Deserialize, Serialize};

use super::{gpu_place, GpuPlace};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

impl From<&MemsetRecord> for MemsetEvent {
    fn from(r: &MemsetRecord) -> Self {
        MemsetEvent {
            gpu: gpu_place!(r),
            start_ns: r.start,
            end_ns: r.end,
            bytes: r.bytes,
            value: r.value,
            memory_kind: r.memory_kind.into(),
            flags: r.flags.into(),
            annotation: None,
            name: "Memset".to_owned(),
            channel_id: r.channel_id,
            channel_type: r.channel_type,
        }
    }
}
