//! The trace window as the merge reads it: every field PyTorch's merge looks
//! at, converted with PyTorch's merge's own rules (`_as_int`, `str()`), so that any
//! window PyTorch's merge accepts is accepted here and any it rejects is rejected.
//!
//! PyTorch's merge raises `KeyError` for some missing fields and converts others with
//! defaults; which ones depends on the event's kind (and for overhead events on
//! whether the event turns out to be the trailing "Activity Buffer Request",
//! which is only known once all events are read). Fields PyTorch's merge always
//! requires are checked while parsing; the overhead ones are kept as [`Lazy`].

use rustc_hash::{FxHashMap, FxHashSet};

use crate::json::value::{PyRaise, Value};
use cupmon_records::ApiDomain;

/// A window ready for the merge.
#[derive(Debug, Default, Clone)]
pub struct MergeWindow {
    pub(crate) events: Vec<MergeEvent>,
    /// CUSTOM1 external id -> name (`None` when the name is not a string: PyTorch's merge skips it).
    pub(crate) user_annotations: FxHashMap<i128, Option<String>>,
    /// pid -> (int32 opaque thread id -> OS thread id).
    pub(crate) thread_resource_map: FxHashMap<i128, FxHashMap<i128, i128>>,
    /// Dropped-record count etc. to put in an exported trace's top level (cupmon's own key).
    pub(crate) cupmon: Option<crate::CupmonInfo>,
    /// Kineto's `deviceProperties` array as JSON text, when the window carries it.
    pub(crate) device_properties: Option<String>,
    /// The process's place in a distributed job, when the window says.
    pub(crate) distributed_info: Option<crate::DistributedInfo>,
    /// NVTX ranges and marks on their CPU threads (complete traces only).
    pub(crate) cpu_annotations: Vec<crate::CpuAnnotation>,
    /// Events on a clock cupmon could not convert (`off_clock.rs`).
    pub(crate) off_clock: super::off_clock::OffClock,
    /// The Python stacks of the recording's launches (its dump's stack side files),
    /// shown as args of the GPU ops in complete traces.
    pub(crate) python_stacks: Option<std::sync::Arc<cupmon_records::dump::StackTable>>,
}

impl MergeWindow {
    /// Give the window a rank (`distributedInfo`), over what it says: for a dump
    /// recorded without torchrun's environment.
    /// A `world_size` of `None` keeps the one the window says.
    pub fn set_rank(&mut self, rank: i64, world_size: Option<i64>) {
        let info = self.distributed_info.get_or_insert_with(Default::default);
        info.rank = rank;
        if world_size.is_some() {
            info.world_size = world_size;
        }
    }

    /// Show the Python stacks of `table` on the GPU ops (complete traces).
    pub fn set_python_stacks(&mut self, table: std::sync::Arc<cupmon_records::dump::StackTable>) {
        if !table.is_empty() {
            self.python_stacks = Some(table);
        }
    }

    /// Number of events in the window.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// External ids of external-correlation records with a correlation id:
    /// the CPU ops whose threads the merge needs.
    pub(crate) fn correlated_external_ids(&self) -> FxHashSet<i128> {
        self.events
            .iter()
            .filter_map(|e| match e {
                MergeEvent::ExternalCorrelation(x) if x.correlation_id != 0 => Some(x.external_id),
                _ => None,
            })
            .collect()
    }

    /// The earliest non-zero start time among the window's timed records.
    pub(crate) fn first_start_ns(&self) -> Option<i128> {
        self.events
            .iter()
            .filter_map(|e| match e {
                MergeEvent::Gpu(g) => Some(g.start_ns),
                MergeEvent::Api(a) => Some(a.start_ns),
                _ => None,
            })
            .filter(|&t| t > 0)
            .min()
    }
}

/// One event, with what the merge needs of it.
#[derive(Debug, Clone)]
pub(crate) enum MergeEvent {
    Gpu(Box<GpuEvent>),
    Api(ApiEvent),
    Overhead(Box<OverheadEvent>),
    ExternalCorrelation(ExternalCorrelation),
    /// Any other kind (cuda_event, cuda_sync, unknown): only its `end_ns` matters.
    Other {
        end_ns: i128,
    },
    /// A kind PyTorch's merge does not know but complete traces show (memory,
    /// memory pools); to PyTorch's merge it is an unknown kind without `end_ns`.
    Extra(Box<crate::WindowEvent>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GpuKind {
    Kernel,
    Memcpy,
    Memset,
}

impl GpuKind {
    pub fn cat(self) -> &'static str {
        match self {
            Self::Kernel => "kernel",
            Self::Memcpy => "gpu_memcpy",
            Self::Memset => "gpu_memset",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct GpuEvent {
    pub kind: GpuKind,
    pub device_id: i128,
    pub stream_id: i128,
    pub context_id: i128,
    pub correlation_id: i128,
    pub start_ns: i128,
    pub end_ns: i128,
    pub graph_id: i128,
    pub graph_node_id: i128,
    pub name: String,
    pub annotation: Option<Value>,
    pub detail: GpuDetail,
    /// A kernel's launch configuration, when the window carries it (cupmon's windows
    /// do; PyTorch's do not): what complete traces show as Kineto's kernel args.
    pub launch: Option<Box<KernelLaunch>>,
}

/// What Kineto shows of a kernel's launch.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KernelLaunch {
    pub config: crate::LaunchConfig,
    pub queued_ns: i128,
}

#[derive(Debug, Clone)]
pub(crate) enum GpuDetail {
    Kernel,
    Memcpy {
        bytes: i128,
        copy_kind: i128,
        src_kind: i128,
        dst_kind: i128,
        flags: i128,
    },
    Memset {
        bytes: i128,
        value: i128,
        memory_kind: i128,
        flags: i128,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct ApiEvent {
    pub domain: ApiDomain,
    pub cbid: i128,
    pub process_id: i128,
    pub thread_id: i128,
    pub correlation_id: i128,
    /// PyTorch's merge shows this call (its name is not filtered out).
    pub registered: bool,
    /// Only read (and required) when `registered`.
    pub start_ns: i128,
    pub end_ns: i128,
    pub end_ns_get: i128,
}

/// A field whose absence or bad value only matters if PyTorch's merge reads it.
#[derive(Debug, Clone)]
pub(crate) enum Lazy<T> {
    Missing(&'static str),
    Raises(PyRaise),
    Value(T),
}

impl<T: Clone> Lazy<T> {
    pub fn get(&self) -> Result<T, PyRaise> {
        match self {
            Lazy::Value(v) => Ok(v.clone()),
            Lazy::Missing(field) => Err(format!("missing field '{field}'")),
            Lazy::Raises(why) => Err(why.clone()),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct OverheadEvent {
    /// `str(event.get("name")) == "Activity Buffer Request"`.
    pub is_buffer_request: bool,
    /// `_as_int(event.get("start_ns", 0))`.
    pub start_ns_get: Lazy<i128>,
    pub name: Lazy<String>,
    pub start_ns: Lazy<i128>,
    pub end_ns: Lazy<i128>,
}

#[derive(Debug, Clone)]
pub(crate) struct ExternalCorrelation {
    /// Only read when the window has user annotations.
    pub external_kind: Lazy<i128>,
    pub external_id: i128,
    pub correlation_id: i128,
    pub end_ns_get: i128,
}

impl MergeEvent {
    /// `_as_int(event.get("end_ns", 0))` for events whose kind is not "overhead".
    pub fn non_overhead_end_ns(&self) -> Option<i128> {
        match self {
            MergeEvent::Gpu(g) => Some(g.end_ns),
            MergeEvent::Api(a) => Some(a.end_ns_get),
            MergeEvent::ExternalCorrelation(x) => Some(x.end_ns_get),
            MergeEvent::Other { end_ns } => Some(*end_ns),
            MergeEvent::Extra(_) => Some(0),
            MergeEvent::Overhead(_) => None,
        }
    }
}
