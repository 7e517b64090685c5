//! MEMCPY: `CUpti_ActivityMemcpy5` (12.0) .. `Memcpy7` (13.4+).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// A memory copy.
    MemcpyRecord = "memcpy", kinds [MEMCPY],
    structs [
        18 => "CUpti_ActivityMemcpy5" / 88,
        26 => "CUpti_ActivityMemcpy6" / 96,
        130_400 => "CUpti_ActivityMemcpy7" / 112,
    ],
    timestamps [start, end],
    fields {
        kind: ActivityKind = "kind" @ 0,
        /// `CUpti_ActivityMemcpyKind` (1 = HtoD, 2 = DtoH, 8 = DtoD, ...).
        copy_kind: u8 = "copyKind" @ 4,
        /// `CUpti_ActivityMemoryKind` of the source (1 = pageable, 2 = pinned, 3 = device, ...).
        src_kind: u8 = "srcKind" @ 5,
        dst_kind: u8 = "dstKind" @ 6,
        /// `CUpti_ActivityFlag` bits (1 = async).
        flags: u8 = "flags" @ 7,
        bytes: u64 = "bytes" @ 8,
        start: u64 = "start" @ 16,
        end: u64 = "end" @ 24,
        device_id: u32 = "deviceId" @ 32,
        context_id: u32 = "contextId" @ 36,
        stream_id: u32 = "streamId" @ 40,
        correlation_id: u32 = "correlationId" @ 44,
        runtime_correlation_id: u32 = "runtimeCorrelationId" @ 48,
        graph_node_id: u64 = "graphNodeId" @ 64,
        graph_id: u32 = "graphId" @ 72,
        channel_id: u32 = "channelID" @ 76,
        channel_type: u32 = "channelType" @ 80,
        /// 13.0+ (the byte was padding before).
        is_device_launched: u8 = "isDeviceLaunched" @ 84 since 130_000,
        /// 12.8+.
        copy_count: u64 = "copyCount" @ 88,
        /// 13.4+.
        source_graph_id: u32 = "sourceGraphId" @ 96,
        /// 13.4+.
        source_graph_node_id: u64 = "sourceGraphNodeId" @ 104,
    }
}

impl ActivityRecord for MemcpyRecord {
    fn span(&self) -> Option<(u64, u64)> {
        Some((self.start, self.end))
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
