//! The trace window as cupmon produces it: typed events (`kinds/`) that serialise to
//! PyTorch's `trace_window` dict (same `kind` names, same field names, same order),
//! followed by cupmon's extra fields (launch configuration and the like).
//!
//! Reading a window back (for the merge) goes through `cupmon_trace::MergeWindow`, which
//! accepts anything PyTorch's merge accepts; this model is the writing side.

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
    /// The process's place in a distributed job (from torchrun's environment).
    #[serde(rename = "distributedInfo", skip_serializing_if = "Option::is_none")]
    pub distributed_info: Option<DistributedInfo>,
    /// NVTX ranges and marks on their CPU threads (`cpu_annotation.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_annotations: Vec<crate::CpuAnnotation>,
    /// Records on a clock cupmon could not convert, kept apart on their own clock
    /// (`cupmon_records::clock::OFF_CLOCK_RULE`); last, so that a window streamed
    /// event by event can still write it after its other fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_clock: Option<OffClockEvents>,
}

/// A window's events on a clock that could not be converted: their timestamps are
/// CUPTI's raw ones (`clock`), not Unix ns, and no merge places them among the others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OffClockEvents {
    /// [`cupmon_records::clock::OFF_CLOCK_NAME`].
    pub clock: &'static str,
    /// [`cupmon_records::clock::OFF_CLOCK_TRACK`]: where traces show them.
    pub track: &'static str,
    pub events: Vec<WindowEvent>,
}

impl OffClockEvents {
    /// `events`, flagged; `None` when there are none.
    pub fn of(events: Vec<WindowEvent>) -> Option<Self> {
        (!events.is_empty()).then_some(Self {
            clock: cupmon_records::clock::OFF_CLOCK_NAME,
            track: cupmon_records::clock::OFF_CLOCK_TRACK,
            events,
        })
    }
}

/// torch.profiler's `distributedInfo`: the rank of a process in a distributed job,
/// which HolisticTraceAnalysis and Perfetto use to tell ranks apart.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DistributedInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    pub rank: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_rank: Option<i64>,
    /// `None` where no one said (a dump's rank taken from its directory name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_world_size: Option<i64>,
}

impl DistributedInfo {
    /// From the variables torchrun (and other launchers) set: `RANK` and
    /// `WORLD_SIZE` (both needed), `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, and the backend
    /// when a launcher names it (`TORCH_DISTRIBUTED_BACKEND`).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let int = |k: &str| get(k).and_then(|v| v.trim().parse::<i64>().ok());
        Some(Self {
            backend: get("TORCH_DISTRIBUTED_BACKEND").filter(|b| !b.is_empty()),
            rank: int("RANK")?,
            local_rank: int("LOCAL_RANK"),
            world_size: Some(int("WORLD_SIZE")?),
            local_world_size: int("LOCAL_WORLD_SIZE"),
        })
    }

    /// The JSON text with a space after each colon and comma, as Python's `json.dumps`
    /// writes it: HolisticTraceAnalysis finds the rank with the pattern `"rank":\s+(\d+)`.
    pub fn to_spaced_json(&self) -> String {
        let mut parts = Vec::new();
        if let Some(b) = &self.backend {
            parts.push(format!(
                "\"backend\": {}",
                serde_json::Value::from(b.as_str())
            ));
        }
        parts.push(format!("\"rank\": {}", self.rank));
        if let Some(r) = self.local_rank {
            parts.push(format!("\"local_rank\": {r}"));
        }
        if let Some(n) = self.world_size {
            parts.push(format!("\"world_size\": {n}"));
        }
        if let Some(n) = self.local_world_size {
            parts.push(format!("\"local_world_size\": {n}"));
        }
        format!("{{{}}}", parts.join(", "))
    }
}

/// Facts about the collection that a trace must carry so that it never looks
/// complete when it is not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CupmonInfo {
    pub version: String,
    /// Records CUPTI dropped; `null` when the dump cannot say (its meta lacks the count,
    /// or the process ended without closing it), `dropped_records_note` saying which.
    pub dropped_records: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_records_note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cupti_version: Option<u32>,
    /// Kernels whose name pointer had no entry in `kernel_names.tsv`.
    #[serde(skip_serializing_if = "is_zero")]
    pub unresolved_kernel_names: u64,
    /// Records stamped by another CUPTI client's clock, converted to Unix ns.
    #[serde(skip_serializing_if = "is_zero")]
    pub clock_converted: u64,
    /// Records of another clock that could not be converted: kept apart, in the
    /// window's `off_clock` (traces: a process of their own).
    #[serde(skip_serializing_if = "is_zero")]
    pub off_clock_records: u64,
    /// The time slice of the dump this holds (`cupmon decode --from/--to/--last`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice: Option<SliceInfo>,
    /// What the dump had retired (removed to keep its disk budget) before: older data
    /// is not in it, and not lost by accident.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired: Option<cupmon_records::dump::Retired>,
    /// How a merge placed the window's records on the CPU trace's clock (complete
    /// merges of a window on torch.profiler's cycle counter, converted or not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_alignment: Option<crate::ClockAlignment>,
    /// Every kernel accounted for: launched (cupmon's own count), recorded, dropped,
    /// unaccounted and the gaps in CUPTI's delivery; `status: not_counted` with the
    /// reason for dumps without the launch counter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<cupmon_records::dump::KernelAccount>,
}

/// `[from_ns, to_ns)` in Unix ns; `null` ends are open (the dump's first or last record).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SliceInfo {
    pub from_ns: Option<u64>,
    pub to_ns: Option<u64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
