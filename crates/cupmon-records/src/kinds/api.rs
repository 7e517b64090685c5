//! RUNTIME and DRIVER: `CUpti_ActivityAPI` (unchanged 12.0 .. 13.5).

use super::ActivityRecord;
use crate::{ActivityKind, ApiDomain};

activity_record! {
    /// A runtime or driver API call.
    ApiRecord = "api", kinds [RUNTIME, DRIVER],
    structs [18 => "CUpti_ActivityAPI" / 40],
    timestamps [start, end],
    fields {
        kind: ActivityKind = "kind" @ 0,
        /// The callback id (`CUpti_runtime_api_trace_cbid` / `CUpti_driver_api_trace_cbid`).
        cbid: u32 = "cbid" @ 4,
        start: u64 = "start" @ 8,
        end: u64 = "end" @ 16,
        process_id: u32 = "processId" @ 24,
        /// CUPTI's opaque thread id unless `cuptiSetThreadIdType(SYSTEM)` was called.
        thread_id: u32 = "threadId" @ 28,
        correlation_id: u32 = "correlationId" @ 32,
        return_value: u32 = "returnValue" @ 36,
    }
}

impl ApiRecord {
    /// Runtime or driver, from the record's kind.
    pub fn domain(&self) -> ApiDomain {
        if self.kind == ActivityKind::DRIVER {
            ApiDomain::Driver
        } else {
            ApiDomain::Runtime
        }
    }

    /// The call's name (`cudaLaunchKernel`), if CUPTI's table knows the id.
    pub fn known_name(&self) -> Option<&'static str> {
        self.domain().known_name(self.cbid)
    }
}

impl ApiDomain {
    /// The activity kind of this domain's records.
    pub fn kind(self) -> ActivityKind {
        match self {
            ApiDomain::Runtime => ActivityKind::RUNTIME,
            ApiDomain::Driver => ActivityKind::DRIVER,
        }
    }
}

impl ActivityRecord for ApiRecord {
    fn span(&self) -> Option<(u64, u64)> {
        Some((self.start, self.end))
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
