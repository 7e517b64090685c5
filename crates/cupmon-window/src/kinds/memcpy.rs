//! Memory copies: PyTorch's `gpu_memcpy` window entries.

use cupmon_records::MemcpyRecord;
use serde::{Deserialize, Serialize};

use super::{gpu_place, GpuPlace};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

impl From<&MemcpyRecord> for MemcpyEvent {
    fn from(r: &MemcpyRecord) -> Self {
        MemcpyEvent {
            gpu: gpu_place!(r),
            runtime_correlation_id: r.runtime_correlation_id,
            start_ns: r.start,
            end_ns: r.end,
            bytes: r.bytes,
            copy_kind: r.copy_kind.into(),
            src_kind: r.src_kind.into(),
            dst_kind: r.dst_kind.into(),
            flags: r.flags.into(),
            annotation: None,
            name: "Memcpy".to_owned(),
            channel_id: r.channel_id,
            channel_type: r.channel_type,
        }
    }
}
