//! The complete trace (the default; `--exact` keeps PyTorch's output as it is): the
//! same events at the same times, with what torch.profiler's own GPU events carry
//! besides (Kineto's names for copies and memsets, its kernel args with the launch
//! configuration and occupancy, `External id` links to the CPU ops, memory
//! bandwidth), GPU ops that overlap on one stream moved to an overlap track so that
//! Perfetto shows them, and the kinds PyTorch's merge does not know (memory). GPU
//! ops without a time (CUPTI's 0) are left out and counted (`untimed.rs`).

use rustc_hash::FxHashMap;

use super::lanes::place_on_lane;
use super::nccl_args::collective_args;
use super::param_comms::ParamComms;
use super::untimed::is_untimed;
use super::window_input::{GpuDetail, GpuEvent, MergeEvent, MergeWindow};
use crate::occupancy::{kernel_occupancy, kineto_float_text, DeviceLimits};

/// CUPTI's CUSTOM0 external correlation: Kineto's CPU ops.
const CPU_OP_EXTERNAL_KIND: i128 = 3;
pub(crate) use super::lanes::OverlapTrack;

/// What the complete trace knows beyond PyTorch's merge.
#[derive(Debug, Default)]
pub(crate) struct Complete {
    /// Device id -> its limits (from the window's or the CPU trace's deviceProperties).
    devices: FxHashMap<i128, DeviceLimits>,
    /// Correlation id -> the CPU op's id (Kineto's `External id`).
    external_ids: FxHashMap<i128, i128>,
    /// Event index -> overlap lane (0: the stream's own track) of GPU events.
    lanes: FxHashMap<usize, i128>,
    /// Every lane above 0, for thread names.
    pub overlap_tracks: Vec<OverlapTrack>,
    /// External id -> collective metadata of the CPU trace's `record_param_comms` ops.
    comms: FxHashMap<i128, Box<ParamComms>>,
    /// The recording's Python stacks, by correlation id (`source line`, `python stack`).
    stacks: Option<std::sync::Arc<cupmon_records::dump::StackTable>>,
}

impl Complete {
    /// For the window in memory: its CPU-op links and overlap lanes worked out here.
    pub fn new(window: &MergeWindow, device_properties: Option<&str>) -> Self {
        let mut external_ids = FxHashMap::default();
        for event in &window.events {
            if let MergeEvent::ExternalCorrelation(x) = event {
                if matches!(x.external_kind.get(), Ok(CPU_OP_EXTERNAL_KIND))
                    && x.correlation_id != 0
                {
                    external_ids.insert(x.correlation_id, x.external_id);
                }
            }
        }
        let (lanes, overlap_tracks) = overlap_lanes(window);
        Self {
            devices: device_limits(device_properties),
            external_ids,
            lanes,
            overlap_tracks,
            comms: FxHashMap::default(),
            stacks: window.python_stacks.clone(),
        }
    }

    /// For a window streamed from a dump: links and lanes are joined event by event
    /// (`lookahead.rs`); `overlap_tracks` come from a first pass.
    pub fn streamed(device_properties: Option<&str>, overlap_tracks: Vec<OverlapTrack>) -> Self {
        Self {
            devices: device_limits(device_properties),
            overlap_tracks,
            ..Self::default()
        }
    }

    /// With the Python stacks of the recording's launches.
    pub fn with_python_stacks(
        mut self,
        stacks: Option<std::sync::Arc<cupmon_records::dump::StackTable>>,
    ) -> Self {
        self.stacks = stacks.filter(|t| !t.is_empty());
        self
    }

    /// The Python frames of the launch of `corr`, outermost first, named as Kineto names
    /// its `python_function` events (`file(line): function`, here the line running at
    /// the launch; `backward of file(line): function` on an autograd engine's thread).
    pub fn python_frames(&self, corr: i128) -> Vec<String> {
        let Some(t) = &self.stacks else {
            return Vec::new();
        };
        let Some(cupmon_records::dump::LaunchStack::Stack(id)) =
            u32::try_from(corr).ok().and_then(|c| t.launch(c))
        else {
            return Vec::new();
        };
        let Some((frames, _)) = t.frames(id) else {
            return Vec::new();
        };
        // A backward stack (the autograd engine's thread, tied to its forward op by
        // torch's sequence number): the forward's frames, each marked.
        let prefix = if t.is_backward(id) {
            cupmon_records::dump::BACKWARD_OF
        } else {
            ""
        };
        frames
            .iter()
            .rev()
            .map(|f| format!("{prefix}{}({}): {}", f.file, f.line, f.function))
            .collect()
    }

    /// With the CPU trace's collective metadata, by External id.
    pub fn with_comms(mut self, comms: FxHashMap<i128, Box<ParamComms>>) -> Self {
        self.comms = comms;
        self
    }

    /// The overlap lane of GPU event `index` (0: its stream's own track).
    pub fn lane(&self, index: usize) -> i128 {
        self.lanes.get(&index).copied().unwrap_or(0)
    }

    pub fn external_id(&self, correlation_id: i128) -> Option<i128> {
        self.external_ids.get(&correlation_id).copied()
    }
}

/// Device id -> limits, from Kineto's `deviceProperties` array (JSON text).
fn device_limits(device_properties: Option<&str>) -> FxHashMap<i128, DeviceLimits> {
    let mut devices = FxHashMap::default();
    let props: Option<serde_json::Value> =
        device_properties.and_then(|t| serde_json::from_str(t).ok());
    for d in props
        .iter()
        .flat_map(|p| p.as_array().into_iter().flatten())
    {
        if let (Some(id), Some(limits)) = (
            d.get("id").and_then(|v| v.as_i64()),
            DeviceLimits::from_kineto_json(d),
        ) {
            devices.insert(i128::from(id), limits);
        }
    }
    devices
}

/// Kineto's name of a GPU op: `Memcpy HtoD (Pinned -> Device)`, `Memset (Device)`;
/// kernels keep theirs.
pub(crate) fn kineto_name(g: &GpuEvent) -> Option<String> {
    match g.detail {
        GpuDetail::Kernel => None,
        GpuDetail::Memcpy {
            copy_kind,
            src_kind,
            dst_kind,
            ..
        } => Some(format!(
            "Memcpy {} ({} -> {})",
            copy_kind_text(copy_kind),
            memory_kind_text(src_kind),
            memory_kind_text(dst_kind)
        )),
        GpuDetail::Memset { memory_kind, .. } => {
            Some(format!("Memset ({})", memory_kind_text(memory_kind)))
        }
    }
}

fn copy_kind_text(kind: i128) -> &'static str {
    u64::try_from(kind)
        .ok()
        .and_then(cupmon_records::copy_kind_word)
        .unwrap_or("<unknown>")
}

fn memory_kind_text(kind: i128) -> &'static str {
    u64::try_from(kind)
        .ok()
        .and_then(cupmon_records::memory_kind_title)
        .unwrap_or("Unrecognized")
}

/// A value of Kineto's args, already written as JSON text where Kineto's formatting
/// matters (floats with six decimals).
pub(crate) enum KinetoArg {
    Int(i128),
    Raw(String),
    Ints([i32; 3]),
    Str(String),
}

/// Kineto's args of a GPU op, in its order, for the complete trace, then a kernel's
/// collective args. The caller adds the args PyTorch's merge writes after these.
pub(crate) fn kineto_args(
    c: &Complete,
    g: &GpuEvent,
    external_id: Option<i128>,
) -> Vec<(&'static str, KinetoArg)> {
    let mut args = Vec::with_capacity(16);
    if let Some(id) = external_id {
        args.push(("External id", KinetoArg::Int(id)));
    }
    match (&g.detail, &g.launch) {
        (GpuDetail::Kernel, Some(launch)) => {
            let l = &launch.config;
            args.push(("queued", KinetoArg::Int(launch.queued_ns)));
            args.push(("device", KinetoArg::Int(g.device_id)));
            args.push(("context", KinetoArg::Int(g.context_id)));
            args.push(("stream", KinetoArg::Int(g.stream_id)));
            args.push(("correlation", KinetoArg::Int(g.correlation_id)));
            args.push((
                "registers per thread",
                KinetoArg::Int(l.registers_per_thread.into()),
            ));
            args.push((
                "shared memory",
                KinetoArg::Int(
                    i128::from(l.static_shared_memory) + i128::from(l.dynamic_shared_memory),
                ),
            ));
            // Without the device's properties (a PyTorch-format dump has none) there
            // is no SM count: Kineto would divide by 0 and write the string "inf"
            // (and -99 for the occupancy), which torch-tb-profiler cannot compare
            // with a number (a TypeError). torch.profiler always knows its devices;
            // cupmon leaves the three args out, as if unknown, rather than write
            // a number it does not have.
            let occupancy = c.devices.get(&g.device_id).map(|d| kernel_occupancy(d, l));
            if let Some(o) = &occupancy {
                args.push((
                    "blocks per SM",
                    KinetoArg::Raw(kineto_float_text(o.blocks_per_sm)),
                ));
                args.push((
                    "warps per SM",
                    KinetoArg::Raw(kineto_float_text(o.warps_per_sm)),
                ));
            }
            args.push(("grid", KinetoArg::Ints(l.grid)));
            args.push(("block", KinetoArg::Ints(l.block)));
            if let Some(o) = &occupancy {
                args.push((
                    "est. achieved occupancy %",
                    KinetoArg::Int(o.torch_2_11_percent().into()),
                ));
            }
        }
        (GpuDetail::Memcpy { bytes, .. } | GpuDetail::Memset { bytes, .. }, _) => {
            args.push(("device", KinetoArg::Int(g.device_id)));
            args.push(("context", KinetoArg::Int(g.context_id)));
            args.push(("stream", KinetoArg::Int(g.stream_id)));
            args.push(("correlation", KinetoArg::Int(g.correlation_id)));
            args.push(("bytes", KinetoArg::Int(*bytes)));
            let duration = g.end_ns - g.start_ns;
            if duration > 0 {
                // Kineto: bytes / ns, which is GB/s.
                let gbps = *bytes as f64 / duration as f64;
                args.push((
                    "memory bandwidth (GB/s)",
                    KinetoArg::Raw(kineto_float_text(gbps)),
                ));
            }
        }
        (GpuDetail::Kernel, None) => {}
    }
    let stack = c.stacks.as_ref().and_then(|t| {
        let node = u64::try_from(g.graph_node_id).unwrap_or(0);
        t.launch_text(u32::try_from(g.correlation_id).ok()?, node)
    });
    if let Some((line, stack)) = stack {
        args.push(("source line", KinetoArg::Str(line)));
        args.push(("python stack", KinetoArg::Str(stack)));
    }
    if matches!(g.detail, GpuDetail::Kernel) {
        let comms = external_id.and_then(|id| c.comms.get(&id)).map(|b| &**b);
        args.extend(collective_args(&g.name, comms));
    }
    args
}

/// Lanes for GPU ops that overlap the previous one on their stream (Perfetto hides
/// one of two overlapping `X` events on a track), by the rule of `lanes.rs` over
/// each stream's ops sorted. Returns the lane of each GPU event above 0 and the
/// overlap tracks used.
fn overlap_lanes(window: &MergeWindow) -> (FxHashMap<usize, i128>, Vec<OverlapTrack>) {
    /// (start, end, event index) of a stream's ops.
    type Ops = Vec<(i128, i128, usize)>;
    let mut by_stream: FxHashMap<(i128, i128), Ops> = FxHashMap::default();
    for (i, e) in window.events.iter().enumerate() {
        if let MergeEvent::Gpu(g) = e {
            if is_untimed(g) {
                continue;
            }
            by_stream
                .entry((g.device_id, g.stream_id))
                .or_default()
                .push((g.start_ns, g.end_ns.max(g.start_ns), i));
        }
    }
    let mut lanes = FxHashMap::default();
    let mut tracks = Vec::new();
    let mut streams: Vec<_> = by_stream.into_iter().collect();
    streams.sort_by_key(|(k, _)| *k);
    for ((device, stream), mut ops) in streams {
        ops.sort_unstable();
        let mut ends: Vec<i128> = Vec::new();
        for (start, end, index) in ops {
            let lane = place_on_lane(&mut ends, start, end);
            if lane > 0 {
                lanes.insert(index, lane as i128);
            }
        }
        for lane in 1..ends.len() {
            tracks.push((device, stream, lane as i128));
        }
    }
    (lanes, tracks)
}
