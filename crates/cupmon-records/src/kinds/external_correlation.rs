//! EXTERNAL_CORRELATION: `CUpti_ActivityExternalCorrelation` (unchanged 12.0 .. 13.5).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// Ties a correlation id to an external id (a CPU op, a user annotation).
    ExternalCorrelationRecord = "external_correlation", kinds [EXTERNAL_CORRELATION],
    structs [18 => "CUpti_ActivityExternalCorrelation" / 24],
    timestamps [],
    fields {
        kind: ActivityKind = "kind" @ 0,
        /// `CUpti_ExternalCorrelationKind` (3 = CUSTOM0, 4 = CUSTOM1, ...).
        external_kind: u32 = "externalKind" @ 4,
        external_id: u64 = "externalId" @ 8,
        correlation_id: u32 = "correlationId" @ 16,
    }
}

impl ActivityRecord for ExternalCorrelationRecord {
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
