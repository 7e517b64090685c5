//! `kernels/`: one row per kernel execution (CONCURRENT_KERNEL and KERNEL records),
//! with every field the Chrome trace shows.

use cupmon_records::KernelRecord;

use super::duration;
use crate::columns::Sym;
use crate::correlations::{Correlate, Correlations};
use crate::table::dataset;

dataset! {
    /// Kernel rows.
    KernelRows = "kernels", time = start_ns,
    "one row per kernel execution (CUPTI's CONCURRENT_KERNEL and KERNEL records)",
    {
        start_ns: I64Col [Delta] "start on the GPU, Unix ns (the Chrome trace's `ts`)",
        duration_ns: OptI64Col [Plain] "end - start in ns (`dur`); NULL for a launch without times: unfinished at a forced flush (end 0) or launched before collection began (start 0)",
        name: StrCol [Dict] "demangled kernel name, as torch.profiler shows it; `kernel@0x<ptr>` when the dump has no name for the pointer",
        device: I64Col [Dict] "device id (the trace's `pid`, `device`)",
        context: I64Col [Dict] "CUDA context id",
        stream: I64Col [Dict] "stream id (the trace's `tid`, `stream`)",
        correlation_id: I64Col [Delta] "CUPTI correlation id: joins the launching call in `api` (`correlation`)",
        external_id: OptI64Col [Delta] "torch.profiler's op id (`External id`, CUSTOM0 external correlation), where a trace window recorded it",
        user_annotation: OptStrCol [Dict] "the user annotation the launch ran under (CUSTOM1 external correlation named in the dump's user annotations)",
        grid_x: I32Col [Dict] "grid size (`grid`)",
        grid_y: I32Col [Dict] "",
        grid_z: I32Col [Dict] "",
        block_x: I32Col [Dict] "block size (`block`)",
        block_y: I32Col [Dict] "",
        block_z: I32Col [Dict] "",
        cluster_x: I64Col [Dict] "thread-block cluster size (0: none)",
        cluster_y: I64Col [Dict] "",
        cluster_z: I64Col [Dict] "",
        registers_per_thread: I32Col [Dict] "`registers per thread`",
        static_shared_memory: I32Col [Dict] "static shared memory per block, bytes (`shared memory` is static + dynamic)",
        dynamic_shared_memory: I32Col [Dict] "dynamic shared memory per block, bytes",
        graph_id: I64Col [Dict] "CUDA graph id (`graph id`; 0: not launched from a graph)",
        graph_node_id: I64Col [Dict] "CUDA graph node id (`graph node id`; 0: none)",
        queued_ns: I64Col [Delta] "when the launch was queued, Unix ns (`queued`; 0 unless CUPTI's latency timestamps are on)",
        submitted_ns: I64Col [Delta] "when it was submitted, Unix ns (0 unless latency timestamps are on)",
        launch_type: I32Col [Dict] "`CUpti_ActivityLaunchType` (0 regular, 1 cooperative single-device, 2 cooperative multi-device, ...)",
        channel_id: I64Col [Dict] "hardware channel id",
        channel_type: I64Col [Dict] "`CUpti_ChannelType` (1 compute, 2 async memcpy, ...)",
        grid_id: I64Col [Delta] "CUPTI's unique grid id of the launch",
    }
}

impl KernelRows {
    /// A kernel record's row; `name` is its demangled name.
    #[inline]
    pub fn push(&mut self, r: &KernelRecord, name: Sym) {
        self.start_ns.push(r.start as i64);
        self.duration_ns.push(duration(r.start, r.end));
        self.name.push(name);
        self.device.push(r.device_id.into());
        self.context.push(r.context_id.into());
        self.stream.push(r.stream_id.into());
        self.correlation_id.push(r.correlation_id.into());
        self.external_id.push(None);
        self.user_annotation.push(None);
        self.grid_x.push(r.grid_x);
        self.grid_y.push(r.grid_y);
        self.grid_z.push(r.grid_z);
        self.block_x.push(r.block_x);
        self.block_y.push(r.block_y);
        self.block_z.push(r.block_z);
        self.cluster_x.push(r.cluster_x.into());
        self.cluster_y.push(r.cluster_y.into());
        self.cluster_z.push(r.cluster_z.into());
        self.registers_per_thread
            .push(r.registers_per_thread.into());
        self.static_shared_memory.push(r.static_shared_memory);
        self.dynamic_shared_memory.push(r.dynamic_shared_memory);
        self.graph_id.push(r.graph_id.into());
        self.graph_node_id.push(r.graph_node_id as i64);
        self.queued_ns.push(r.queued as i64);
        self.submitted_ns.push(r.submitted as i64);
        self.launch_type.push(r.launch_type.into());
        self.channel_id.push(r.channel_id.into());
        self.channel_type.push(r.channel_type.into());
        self.grid_id.push(r.grid_id);
    }
}

impl Correlate for KernelRows {
    fn correlate(&mut self, c: &Correlations) {
        c.fill(
            &self.correlation_id,
            &mut self.external_id,
            &mut self.user_annotation,
        );
    }
}
