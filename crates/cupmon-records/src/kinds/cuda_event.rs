//! CUDA_EVENT: `CUpti_ActivityCudaEvent` (12.0) .. `CudaEvent3` (13.5).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// A `cudaEventRecord`.
    CudaEventRecord = "cuda_event", kinds [CUDA_EVENT],
    structs [
        18 => "CUpti_ActivityCudaEvent" / 24,
        26 => "CUpti_ActivityCudaEvent2" / 56,
        130_500 => "CUpti_ActivityCudaEvent3" / 80,
    ],
    timestamps [device_timestamp],
    fields {
        kind: ActivityKind = "kind" @ 0,
        correlation_id: u32 = "correlationId" @ 4,
        context_id: u32 = "contextId" @ 8,
        stream_id: u32 = "streamId" @ 12,
        event_id: u32 = "eventId" @ 16,
        /// 12.8+.
        device_id: u32 = "deviceId" @ 24,
        /// 12.8+.
        device_timestamp: u64 = "deviceTimestamp" @ 40,
        /// 12.8+.
        cuda_event_sync_id: u64 = "cudaEventSyncId" @ 48,
        /// 13.5+.
        graph_node_id: u64 = "graphNodeId" @ 56,
        /// 13.5+.
        graph_id: u32 = "graphId" @ 64,
        /// 13.5+.
        source_graph_id: u32 = "sourceGraphId" @ 68,
        /// 13.5+.
        source_graph_node_id: u64 = "sourceGraphNodeId" @ 72,
    }
}

impl ActivityRecord for CudaEventRecord {
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
