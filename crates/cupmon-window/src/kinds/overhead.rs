//! CUPTI overhead: PyTorch's `overhead` window entries.

use cupmon_records::OverheadRecord;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverheadEvent {
    pub overhead_kind: u32,
    pub object_kind: u32,
    pub object_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub correlation_id: u32,
    pub name: String,
}

impl From<&OverheadRecord> for OverheadEvent {
    fn from(r: &OverheadRecord) -> Self {
        OverheadEvent {
            overhead_kind: r.overhead_kind,
            object_kind: r.object_kind,
            // PyTorch's monitor writes 0 here; the raw ids stay in the record.
            object_id: 0,
            start_ns: r.start,
            end_ns: r.end,
            correlation_id: r.correlation_id,
            name: overhead_kind_name(r.overhead_kind),
        }
    }
}

/// CUPTI's overhead-kind names, as PyTorch's monitor writes them.
pub fn overhead_kind_name(kind: u32) -> String {
    let known = match kind {
        0 => "Unknown",
        1 => "Driver Compiler",
        0x1_0000 => "Buffer Flush",
        0x2_0000 => "Instrumentation",
        0x3_0000 => "Resource",
        0x4_0000 => "Runtime Triggered Module Loading",
        0x5_0000 => "Lazy Function Loading",
        0x6_0000 => "Command Buffer Full",
        0x7_0000 => "Activity Buffer Request",
        0x8_0000 => "UVM Activity Init",
        _ => return format!("overhead_{kind}"),
    };
    known.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_names_match_pytorchs_monitor() {
        assert_eq!(overhead_kind_name(0x7_0000), "Activity Buffer Request");
        assert_eq!(overhead_kind_name(12), "overhead_12");
    }
}
