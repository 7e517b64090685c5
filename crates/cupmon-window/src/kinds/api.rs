//! Runtime and driver calls: PyTorch's `cuda_runtime` / `cuda_driver` window entries.

use std::borrow::Cow;

use cupmon_records::ApiRecord;
use serde::{Deserialize, Serialize};

/// A runtime or driver API call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiEvent {
    pub cbid: u32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub process_id: u32,
    pub thread_id: u32,
    pub correlation_id: u32,
    pub return_value: u32,
    /// `cbid_N`, as PyTorch's monitor writes it; the merge names calls from its own table.
    pub name: String,
    /// The call's name from cupmon's callback-id table (extra field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_name: Option<Cow<'static, str>>,
}

impl From<&ApiRecord> for ApiEvent {
    fn from(r: &ApiRecord) -> Self {
        ApiEvent {
            cbid: r.cbid,
            start_ns: r.start,
            end_ns: r.end,
            process_id: r.process_id,
            thread_id: r.thread_id,
            correlation_id: r.correlation_id,
            return_value: r.return_value,
            name: format!("cbid_{}", r.cbid),
            api_name: r.known_name().map(Cow::Borrowed),
        }
    }
}
