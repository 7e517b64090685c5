//! `api/`: one row per CUDA runtime or driver call, recorded while a trace window
//! was open.

use cupmon_records::{ApiDomain, ApiRecord};

use super::duration;
use crate::correlations::{Correlate, Correlations};
use crate::encode::{I64Col, OptI64Col, OptStrCol, StrCol, Strings, U32Col};
use crate::table::dataset;

dataset! {
    /// Runtime and driver API rows.
    ApiRows = "api", time = start_ns,
    "one row per CUDA runtime or driver call (CUPTI's RUNTIME and DRIVER records, taken in trace windows)",
    {
        start_ns: I64Col [Delta] "call start on the CPU, Unix ns (`ts`)",
        duration_ns: OptI64Col [Delta] "end - start in ns (`dur`); NULL without times",
        domain: StrCol [Dict] "`runtime` or `driver` (the trace's `cuda_runtime` / `cuda_driver` category)",
        name: StrCol [Dict] "the call's name (`cudaLaunchKernel`), or `cbid_<N>` when CUPTI's table lacks the id",
        cbid: U32Col [Dict] "CUPTI callback id (`cbid`)",
        thread_id: U32Col [Dict] "the calling thread (`tid`): an OS thread id when cupmon set CUPTI's thread-id type, else CUPTI's opaque id",
        correlation_id: U32Col [Delta] "CUPTI correlation id (`correlation`): joins the GPU work it launched",
        return_value: U32Col [Dict] "the call's return code (0: success)",
        external_id: OptI64Col [Delta] "torch.profiler's op id (`External id`, CUSTOM0)",
        user_annotation: OptStrCol [Dict] "the user annotation the call ran under",
    }
}

impl ApiRows {
    pub fn push(&mut self, r: &ApiRecord, strings: &mut Strings) {
        let domain = r.domain();
        self.start_ns.push(r.start as i64);
        self.duration_ns.push(duration(r.start, r.end));
        self.domain.push(strings.intern(match domain {
            ApiDomain::Runtime => "runtime",
            ApiDomain::Driver => "driver",
        }));
        self.name.push(match r.known_name() {
            Some(name) => strings.intern(name),
            None => strings.intern(&format!("cbid_{}", r.cbid)),
        });
        self.cbid.push(r.cbid);
        self.thread_id.push(r.thread_id);
        self.correlation_id.push(r.correlation_id);
        self.return_value.push(r.return_value);
        self.external_id.push(None);
        self.user_annotation.push(None);
    }
}

impl Correlate for ApiRows {
    fn correlate(&mut self, c: &Correlations) {
        c.fill(
            &self.correlation_id,
            &mut self.external_id,
            &mut self.user_annotation,
        );
    }
}
