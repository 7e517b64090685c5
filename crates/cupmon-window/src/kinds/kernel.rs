//! Kernel events: PyTorch's `kernel` window entries, plus the launch configuration.

use cupmon_records::{KernelNames, KernelRecord};
use serde::{Deserialize, Serialize};

use super::{gpu_place, GpuPlace};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelEvent {
    #[serde(flatten)]
    pub gpu: GpuPlace,
    pub start_ns: u64,
    pub end_ns: u64,
    pub annotation: Option<String>,
    /// Demangled kernel name (or `kernel@0x...` when the name pointer was not resolved).
    pub name: String,
    // cupmon's extra fields, after PyTorch's.
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub cluster: [u32; 3],
    pub registers_per_thread: u16,
    pub static_shared_memory: i32,
    pub dynamic_shared_memory: i32,
    pub queued_ns: u64,
    pub submitted_ns: u64,
    pub completed_ns: u64,
    pub launch_type: u8,
    pub channel_id: u32,
    pub channel_type: u32,
    pub grid_id: i64,
    /// False when the kernel-name pointer had no entry in the dump's name table.
    pub name_resolved: bool,
}

impl KernelEvent {
    pub(crate) fn from_record(r: &KernelRecord, names: &mut KernelNames<'_>) -> Self {
        let (name, resolved) = names.name(r.name_ptr);
        KernelEvent {
            gpu: gpu_place!(r),
            start_ns: r.start,
            end_ns: r.end,
            annotation: None,
            name: name.to_owned(),
            grid: r.grid(),
            block: r.block(),
            cluster: r.cluster(),
            registers_per_thread: r.registers_per_thread,
            static_shared_memory: r.static_shared_memory,
            dynamic_shared_memory: r.dynamic_shared_memory,
            queued_ns: r.queued,
            submitted_ns: r.submitted,
            completed_ns: r.completed,
            launch_type: r.launch_type,
            channel_id: r.channel_id,
            channel_type: r.channel_type,
            grid_id: r.grid_id,
            name_resolved: resolved,
        }
    }
}
