//! `memcpy/`: one row per memory copy.

use cupmon_records::MemcpyRecord;

use super::{duration, nonzero};
use crate::correlations::{Correlate, Correlations};
use crate::encode::{I32Col, I64Col, OptI64Col, OptStrCol, StrCol, Strings, U32Col};
use crate::table::dataset;
use crate::words::{copy_kind, memory_kind, COPY_KIND, MEMORY_KIND};

dataset! {
    /// Memcpy rows.
    MemcpyRows = "memcpy", time = start_ns,
    "one row per memory copy (CUPTI's MEMCPY records)",
    {
        start_ns: I64Col [Delta] "start on the GPU, Unix ns (`ts`)",
        duration_ns: OptI64Col [Delta] "end - start in ns (`dur`); NULL without times",
        bytes: I64Col [Dict] "bytes copied (`bytes`)",
        copy_kind: StrCol [Dict] "`copy kind`: HtoD, DtoH, DtoD, HtoH, PtoP, ... (a number when CUPTI adds one)",
        src_kind: StrCol [Dict] "`src kind`: pageable, pinned, device, array, managed, ...",
        dst_kind: StrCol [Dict] "`dst kind`, the same words",
        flags: I32Col [Dict] "`CUpti_ActivityFlag` bits (`flags`; 1: async)",
        device: U32Col [Dict] "device id (`pid`, `device`)",
        context: U32Col [Dict] "CUDA context id",
        stream: U32Col [Dict] "stream id (`tid`, `stream`)",
        correlation_id: U32Col [Delta] "CUPTI correlation id (`correlation`)",
        runtime_correlation_id: U32Col [Delta] "correlation id of the runtime call, when the copy was issued through the driver",
        external_id: OptI64Col [Delta] "torch.profiler's op id (`External id`), where a trace window recorded it",
        user_annotation: OptStrCol [Dict] "the user annotation the copy ran under",
        graph_id: OptI64Col [Dict] "CUDA graph id; NULL: not in a graph",
        graph_node_id: OptI64Col [Dict] "CUDA graph node id; NULL: none",
        stack_id: OptI64Col [Dict] "the Python stack that launched it: joins `stacks` (with `host` and `pid`); 0: launched from a thread without Python frames; NULL: the dump noted no stack for it",
        source_line: OptStrCol [Dict] "`file:line` of the innermost user frame of that stack (`cupmon stats --by-line`), `backward of file:line` for the autograd engine's kernels that torch's sequence numbers tied to a forward op (emit_nvtx); NULL without a stack",
    }
}

impl MemcpyRows {
    pub fn push(&mut self, r: &MemcpyRecord, strings: &mut Strings) {
        self.start_ns.push(r.start as i64);
        self.duration_ns.push(duration(r.start, r.end));
        self.bytes.push(r.bytes as i64);
        let copy = strings.word(COPY_KIND, r.copy_kind.into(), copy_kind);
        self.copy_kind.push(copy);
        let src = strings.word(MEMORY_KIND, r.src_kind.into(), memory_kind);
        self.src_kind.push(src);
        let dst = strings.word(MEMORY_KIND, r.dst_kind.into(), memory_kind);
        self.dst_kind.push(dst);
        self.flags.push(r.flags.into());
        self.device.push(r.device_id);
        self.context.push(r.context_id);
        self.stream.push(r.stream_id);
        self.correlation_id.push(r.correlation_id);
        self.runtime_correlation_id.push(r.runtime_correlation_id);
        self.external_id.push(None);
        self.user_annotation.push(None);
        self.graph_id.push(nonzero(r.graph_id.into()));
        self.graph_node_id.push(nonzero(r.graph_node_id as i64));
    }
}

impl Correlate for MemcpyRows {
    fn correlate(&mut self, c: &Correlations) {
        c.fill(
            &self.correlation_id,
            &mut self.external_id,
            &mut self.user_annotation,
        );
    }
}
