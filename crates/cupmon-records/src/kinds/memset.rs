//! MEMSET: `CUpti_ActivityMemset4` (12.0) .. `Memset5` (13.4+).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// A memset.
    MemsetRecord = "memset", kinds [MEMSET],
    structs [
        18 => "CUpti_ActivityMemset4" / 88,
        130_400 => "CUpti_ActivityMemset5" / 104,
    ],
    timestamps [start, end],
    fields {
        kind: ActivityKind = "kind" @ 0,
        value: u32 = "value" @ 4,
        bytes: u64 = "bytes" @ 8,
        start: u64 = "start" @ 16,
        end: u64 = "end" @ 24,
        device_id: u32 = "deviceId" @ 32,
        context_id: u32 = "contextId" @ 36,
        stream_id: u32 = "streamId" @ 40,
        correlation_id: u32 = "correlationId" @ 44,
        flags: u16 = "flags" @ 48,
        memory_kind: u16 = "memoryKind" @ 50,
        graph_node_id: u64 = "graphNodeId" @ 64,
        graph_id: u32 = "graphId" @ 72,
        channel_id: u32 = "channelID" @ 76,
        channel_type: u32 = "channelType" @ 80,
        /// 13.0+ (the byte was padding before).
        is_device_launched: u8 = "isDeviceLaunched" @ 84 since 130_000,
        /// 13.4+.
        source_graph_id: u32 = "sourceGraphId" @ 88,
        /// 13.4+.
        source_graph_node_id: u64 = "sourceGraphNodeId" @ 96,
    }
}

impl ActivityRecord for MemsetRecord {
    fn span(&self) -> Option<(u64, u64)> {
        Some((self.start, self.end))
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
