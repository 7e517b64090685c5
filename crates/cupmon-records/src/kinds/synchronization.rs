//! SYNCHRONIZATION: `CUpti_ActivitySynchronization` (12.0) .. `Synchronization2` (12.8+).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// A host-side wait (event, stream or context synchronisation).
    SyncRecord = "synchronization", kinds [SYNCHRONIZATION],
    structs [
        18 => "CUpti_ActivitySynchronization" / 40,
        26 => "CUpti_ActivitySynchronization2" / 56,
    ],
    timestamps [start, end],
    fields {
        kind: ActivityKind = "kind" @ 0,
        /// `CUpti_ActivitySynchronizationType` (1 = event sync, 2 = stream wait event, ...).
        sync_type: u32 = "type" @ 4,
        start: u64 = "start" @ 8,
        end: u64 = "end" @ 16,
        correlation_id: u32 = "correlationId" @ 24,
        context_id: u32 = "contextId" @ 28,
        stream_id: u32 = "streamId" @ 32,
        cuda_event_id: u32 = "cudaEventId" @ 36,
        /// 12.8+.
        cuda_event_sync_id: u64 = "cudaEventSyncId" @ 40,
        /// 12.8+.
        return_value: u32 = "returnValue" @ 48,
    }
}

impl ActivityRecord for SyncRecord {
    fn span(&self) -> Option<(u64, u64)> {
        Some((self.start, self.end))
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
