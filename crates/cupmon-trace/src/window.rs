//! The trace window as cupmon produces it: typed events (`kinds/`) that serialise to
//! PyTorch's `trace_window` dict (same `kind` names, same field names, same order),
//! followed by cupmon's extra fields (launch configuration and the like).
//!
//! Reading a window back (for the merge) goes through [`crate::MergeWindow`], which
//! accepts anything the seed accepts; this model is the writing side.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::WindowEvent;

/// A trace window: GPU activity plus, while the window was open, CPU-side API
/// records and the correlation that ties them together.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceWindow {
    pub events: Vec<WindowEvent>,
    /// CUPTI activity kinds this window enabled on top of the always-on ones.
    pub extra_activities: Vec<u32>,
    /// CUSTOM1 external-correlation id -> annotation name.
    pub user_annotations: BTreeMap<u64, String>,
    /// pid -> (CUPTI opaque thread id, as int32) -> OS thread id.
    pub thread_resource_map: BTreeMap<i64, BTreeMap<i64, i64>>,
    pub start_ns: u64,
    /// What cupmon knows about the completeness of this window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cupmon: Option<CupmonInfo>,
    /// The GPUs, as Kineto's `deviceProperties` array (for exported traces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_properties: Option<serde_json::Value>,
}

/// Facts about the collection that a trace must carry so that it never looks
/// complete when it is not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CupmonInfo {
    pub version: String,
    pub dropped_records: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cupti_version: Option<u32>,
    /// Kernels whose name pointer had no entry in `kernel_names.tsv`.
    #[serde(skip_serializing_if = "is_zero")]
    pub unresolved_kernel_names: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
