//! External correlation: PyTorch's `external_correlation` window entries.

use cupmon_records::ExternalCorrelationRecord;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalCorrelationEvent {
    pub external_kind: u32,
    pub external_id: u64,
    pub correlation_id: u32,
    pub name: String,
}

impl From<&ExternalCorrelationRecord> for ExternalCorrelationEvent {
    fn from(r: &ExternalCorrelationRecord) -> Self {
        ExternalCorrelationEvent {
            external_kind: r.external_kind,
            external_id: r.external_id,
            correlation_id: r.correlation_id,
            name: "external_correlation".to_owned(),
        }
    }
}
