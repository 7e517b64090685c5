//! `kernels/`: one row per kernel execution (CONCURRENT_KERNEL and KERNEL records),
//! with every field the Chrome trace shows. Fields it does not show (cluster size,
//! launch type, channel, submitted time) are left out: each column costs about 6 ns
//! per row to write (bench/parquet/RESULTS.md), and this is the table with the
//! most rows. The thirteen columns a launch fixes are kept once per launch shape
//! (`crate::encode::shapes`).

use cupmon_records::nccl::NcclKernel;
use cupmon_records::KernelRecord;

use super::{duration, nonzero};
use crate::correlations::{Correlate, Correlations};
use crate::encode::shapes::{self, Shaped};
use crate::encode::Shape;
use crate::encode::{I64Col, OptI64Col, OptStrCol, Sym, U32Col};
use crate::table::dataset;

dataset! {
    /// Kernel rows.
    KernelRows = "kernels", time = start_ns, shapes = shapes,
    "one row per kernel execution (CUPTI's CONCURRENT_KERNEL and KERNEL records)",
    {
        start_ns: I64Col [Delta] "start on the GPU, Unix ns (the Chrome trace's `ts`)",
        duration_ns: OptI64Col [Delta] "end - start in ns (`dur`); NULL for a launch unfinished at a forced flush (end 0); launches CUPTI did not time (start 0) are not rows",
        name: Shaped<shapes::Name> [Dict] "demangled kernel name, as torch.profiler shows it; `kernel@0x<ptr>` when the dump has no name for the pointer",
        device: Shaped<shapes::Device> [Dict] "device id (the trace's `pid`, `device`)",
        context: Shaped<shapes::Context> [Dict] "CUDA context id",
        stream: Shaped<shapes::Stream> [Dict] "stream id (the trace's `tid`, `stream`)",
        correlation_id: U32Col [Delta] "CUPTI correlation id: joins the launching call in `api` (`correlation`)",
        external_id: OptI64Col [Delta] "torch.profiler's op id (`External id`, CUSTOM0 external correlation), where a trace window recorded it",
        user_annotation: OptStrCol [Dict] "the user annotation the launch ran under (CUSTOM1 external correlation named in the dump's user annotations)",
        grid_x: Shaped<shapes::GridX> [Dict] "grid size (`grid`)",
        grid_y: Shaped<shapes::GridY> [Dict] "",
        grid_z: Shaped<shapes::GridZ> [Dict] "",
        block_x: Shaped<shapes::BlockX> [Dict] "block size (`block`)",
        block_y: Shaped<shapes::BlockY> [Dict] "",
        block_z: Shaped<shapes::BlockZ> [Dict] "",
        registers_per_thread: Shaped<shapes::Registers> [Dict] "`registers per thread`",
        static_shared_memory: Shaped<shapes::StaticShared> [Dict] "static shared memory per block, bytes (`shared memory` is static + dynamic)",
        dynamic_shared_memory: Shaped<shapes::DynamicShared> [Dict] "dynamic shared memory per block, bytes",
        graph_id: OptI64Col [Dict] "CUDA graph id (`graph id`); NULL: not launched from a graph",
        graph_node_id: OptI64Col [Dict] "CUDA graph node id (`graph node id`); NULL: none",
        queued_ns: OptI64Col [Delta] "when the launch was queued, Unix ns (`queued`); NULL unless CUPTI's latency timestamps are on",
        grid_id: I64Col [Delta] "CUPTI's unique grid id of the launch",
        collective: OptStrCol [Dict] "the NCCL collective the kernel's name names (`AllReduce`, `AllGather`, `ReduceScatter`, `Broadcast`, `Reduce`, `SendRecv`, ...: `cupmon_records::nccl::NcclKernel`, mangled or demangled names, every NCCL naming scheme since 2.0); `unknown` for an NCCL kernel whose name names none (NCCL's generic kernel); NULL for every other kernel. The views' NCCL kernels are those where it is not NULL",
        stack_id: OptI64Col [Dict] "the Python stack that launched it: joins `stacks` (with `host` and `pid`); 0: launched from a thread without Python frames; NULL: the dump noted no stack for it",
        source_line: OptStrCol [Dict] "`file:line` of the innermost user frame of that stack (`cupmon stats --by-line`), `backward of file:line` for the autograd engine's kernels that torch's sequence numbers tied to a forward op (emit_nvtx); NULL without a stack",
    }
}

impl KernelRows {
    /// A kernel record's row; `name` is its demangled name, `collective` what
    /// [`nccl_collective`] gives for it.
    #[inline]
    pub fn push(&mut self, r: &KernelRecord, name: Sym, collective: Option<Sym>) {
        self.start_ns.push(r.start as i64);
        self.duration_ns.push(duration(r.start, r.end));
        self.shapes.push(Shape {
            name,
            device: r.device_id,
            context: r.context_id,
            stream: r.stream_id,
            grid: r.grid(),
            block: r.block(),
            registers_per_thread: r.registers_per_thread.into(),
            static_shared_memory: r.static_shared_memory,
            dynamic_shared_memory: r.dynamic_shared_memory,
        });
        self.correlation_id.push(r.correlation_id);
        self.external_id.push(None);
        self.user_annotation.push(None);
        self.graph_id.push(nonzero(r.graph_id.into()));
        self.graph_node_id.push(nonzero(r.graph_node_id as i64));
        self.queued_ns.push(nonzero(r.queued as i64));
        self.grid_id.push(r.grid_id);
        self.collective.push(collective);
    }
}

/// The `collective` column's value for a kernel named `name` (once per name, not
/// per row): the collective an NCCL kernel's name gives, `unknown` for an NCCL
/// kernel whose name gives none, `None` for other kernels.
pub fn nccl_collective(name: &str) -> Option<&str> {
    NcclKernel::parse(name).map(|k| k.collective.map_or("unknown", |c| c.value))
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
