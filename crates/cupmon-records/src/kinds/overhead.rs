//! OVERHEAD: `CUpti_ActivityOverhead` (12.0) .. `Overhead3` (12.4+).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// Time CUPTI or the driver spent on its own work.
    OverheadRecord = "overhead", kinds [OVERHEAD],
    structs [
        18 => "CUpti_ActivityOverhead" / 40,
        21 => "CUpti_ActivityOverhead2" / 48,
        22 => "CUpti_ActivityOverhead3" / 56,
    ],
    timestamps [start, end],
    fields {
        kind: ActivityKind = "kind" @ 0,
        overhead_kind: u32 = "overheadKind" @ 4,
        /// `CUpti_ActivityObjectKind` (1 = process, 2 = thread, 3 = device, 4 = context,
        /// 5 = stream).
        object_kind: u32 = "objectKind" @ 8,
        /// The raw `objectId` union: `[pid, tid, 0]` for process/thread objects,
        /// `[device, context, stream]` otherwise.
        object_id: [u32; 3] = "objectId" @ 12,
        start: u64 = "start" @ 24,
        end: u64 = "end" @ 32,
        /// 12.3+.
        correlation_id: u32 = "correlationId" @ 40,
        /// 12.4+: CUPTI's `void *overheadData` (a pointer into the recording process).
        overhead_data: u64 = "overheadData" @ 48,
    }
}

impl OverheadRecord {
    /// `(process id, thread id)` when the object is a process or thread.
    pub fn process_thread(&self) -> Option<(u32, u32)> {
        matches!(self.object_kind, 1 | 2).then_some((self.object_id[0], self.object_id[1]))
    }
}

impl ActivityRecord for OverheadRecord {
    fn span(&self) -> Option<(u64, u64)> {
        Some((self.start, self.end))
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
