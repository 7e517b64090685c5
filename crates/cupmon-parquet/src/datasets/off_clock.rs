//! `off_clock/`: one row per record on a clock cupmon could not convert
//! (`cupmon_records::clock::OFF_CLOCK_RULE`): kernels, copies, memsets and API calls
//! whose timestamps are CUPTI's raw ones (a client's cycle counter), kept apart from
//! the other datasets, whose times are Unix ns. Written only when a dump has such
//! records.

use cupmon_records::clock::OFF_CLOCK_NAME;
use cupmon_records::{ApiDomain, Record};

use crate::correlations::Correlate;
use crate::encode::{I64Col, OptI64Col, StrCol, Strings, U32Col};
use crate::table::dataset;

dataset! {
    /// Rows of records on their own clock.
    OffClockRows = "off_clock", time = buffer_completed_ns,
    "one row per kernel, copy, memset or API call on a clock cupmon could not convert (a dump cut short after torch.profiler registered its own clock): its raw times, never mixed with the other datasets' Unix times",
    {
        buffer_completed_ns: I64Col [Delta] "Unix ns when CUPTI completed the buffer holding the record (the record ran before it): the only Unix time such a record has; rows are partitioned by it",
        clock: StrCol [Dict] "the clock of `raw_start`/`raw_end`: `cupti_raw` (CUPTI's timestamps as written: another CUPTI client's clock, in its ticks, not ns since any known moment)",
        kind: StrCol [Dict] "the record's kind, as traces name it: `kernel`, `gpu_memcpy`, `gpu_memset`, `cuda_runtime`, `cuda_driver`",
        name: StrCol [Dict] "kernel name (demangled), copy or memset kind, or the API call's name",
        raw_start: I64Col [Delta] "start on the record's own clock (`clock`); 0: CUPTI gave none",
        raw_end: I64Col [Delta] "end on the record's own clock",
        device: OptI64Col [Dict] "device id (GPU records); NULL for API calls",
        stream: OptI64Col [Dict] "stream id (GPU records); NULL for API calls",
        correlation_id: U32Col [Delta] "CUPTI correlation id",
    }
}

impl OffClockRows {
    /// `record`'s row (`name`: its kernel name, resolved by the caller), if it is of a
    /// kind the other datasets export; false otherwise.
    pub fn push(
        &mut self,
        buffer_completed_ns: u64,
        record: &Record,
        kernel_name: impl FnOnce(u64) -> String,
        strings: &mut Strings,
    ) -> bool {
        let (kind, name, start, end, place) = match record {
            Record::Kernel(r) => (
                "kernel",
                kernel_name(r.name_ptr),
                r.start,
                r.end,
                Some((r.device_id, r.stream_id)),
            ),
            Record::Memcpy(r) => (
                "gpu_memcpy",
                format!(
                    "Memcpy {}",
                    cupmon_records::copy_kind_word(r.copy_kind.into()).unwrap_or("?")
                ),
                r.start,
                r.end,
                Some((r.device_id, r.stream_id)),
            ),
            Record::Memset(r) => (
                "gpu_memset",
                "Memset".to_owned(),
                r.start,
                r.end,
                Some((r.device_id, r.stream_id)),
            ),
            Record::Api(r) => (
                match r.domain() {
                    ApiDomain::Runtime => "cuda_runtime",
                    ApiDomain::Driver => "cuda_driver",
                },
                r.known_name()
                    .map_or_else(|| format!("cbid_{}", r.cbid), str::to_owned),
                r.start,
                r.end,
                None,
            ),
            _ => return false,
        };
        self.buffer_completed_ns.push(buffer_completed_ns as i64);
        self.clock.push(strings.intern(OFF_CLOCK_NAME));
        self.kind.push(strings.intern(kind));
        self.name.push(strings.intern(&name));
        self.raw_start.push(start as i64);
        self.raw_end.push(end as i64);
        self.device.push(place.map(|p| i64::from(p.0)));
        self.stream.push(place.map(|p| i64::from(p.1)));
        self.correlation_id.push(record.correlation_id());
        true
    }
}

impl Correlate for OffClockRows {}
