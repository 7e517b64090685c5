//! `dumps/`: one row per export of a dump: what the dump says about its session
//! (CUPTI, clocks, dropped records) and what this export took from it (chunks, time
//! range, rows). A dump exported several times as it grew has a row per export;
//! `cupmon.sql`'s `dumps` view folds them into one row per dump.

use crate::encode::{BoolCol, I64Col, OptI64Col, OptStrCol, StrCol};
use crate::table::dataset;

dataset! {
    /// Rows describing exports of dumps.
    DumpRows = "dumps", time = time_ns,
    "one row per export of a dump (several for a dump exported again as it grew; the `dumps` view of cupmon.sql folds them)",
    {
        time_ns: I64Col [Plain] "the session start, Unix ns (0 when the meta lacks it): places every export of one dump in the same day=/hour=",
        first_ns: OptI64Col [Plain] "earliest start among the exported rows, Unix ns",
        last_ns: OptI64Col [Plain] "latest end among the exported rows",
        dump: StrCol [Dict] "the dump directory, as the exporting host saw it",
        export_seq: StrCol [Dict] "the `<seq>` of this export's file names",
        first_chunk: I64Col [Plain] "first chunk (activity buffer) this export read, counted over the dump's whole history (retired segments included)",
        end_chunk: I64Col [Plain] "one past the last chunk it read (the next export starts there)",
        from_ns: OptI64Col [Plain] "`--from` of the export, Unix ns; NULL: from the start",
        to_ns: OptI64Col [Plain] "`--to`; NULL: to the end",
        kernels: I64Col [Plain] "kernel rows written",
        memcpy: I64Col [Plain] "memcpy rows written",
        memset: I64Col [Plain] "memset rows written",
        api: I64Col [Plain] "api rows written",
        records: I64Col [Plain] "records read from the chunks (all kinds)",
        dropped_records: OptI64Col [Plain] "records CUPTI dropped, as the meta says; NULL when it cannot say (see the note)",
        dropped_records_note: OptStrCol [Plain] "why `dropped_records` is NULL",
        session_open: BoolCol [Plain] "the process had not closed its dump (running, or killed)",
        cupti_version: OptI64Col [Plain] "`cuptiGetVersion` of the recording (130001 for CUPTI 13.0)",
        cupti_library: OptStrCol [Plain] "the libcupti the recording loaded",
        recorder_version: OptStrCol [Plain] "the cupmon version that recorded the dump (NULL for PyTorch's monitor)",
        exporter_version: StrCol [Plain] "the cupmon version that wrote these files",
        buffer_size: OptI64Col [Plain] "CUPTI activity buffer size, bytes",
        session_start_unix_ns: OptI64Col [Plain] "session start on the Unix clock, ns",
        session_start_cupti_ns: OptI64Col [Plain] "the same instant on CUPTI's clock",
        session_start_monotonic_ns: OptI64Col [Plain] "the same instant on CLOCK_MONOTONIC",
        timestamp_mode: OptStrCol [Plain] "`cupti_default`: record times are CUPTI's default clock (Unix ns)",
        clock_converted: I64Col [Plain] "records on another CUPTI client's clock, converted to Unix ns",
        off_clock: I64Col [Plain] "records on another clock that could not be converted: kept apart, on their own clock, in `off_clock`",
        unresolved_kernel_names: I64Col [Plain] "kernel rows whose name pointer the dump could not name",
        world_size: OptI64Col [Plain] "processes in the job (`distributedInfo.world_size`)",
        local_world_size: OptI64Col [Plain] "processes on the host",
        backend: OptStrCol [Plain] "the distributed backend (nccl, ...)",
        command: OptStrCol [Plain] "the recorded program's command line, when the dump's meta holds it",
        warnings: I64Col [Plain] "problems reading the dump (damaged or truncated chunks, ...): their number",
        warning_text: OptStrCol [Plain] "those warnings, one per line",
        device_properties: OptStrCol [Plain] "the GPUs (Kineto's deviceProperties JSON), when the meta holds them",
        meta_json: StrCol [Plain] "the dump's whole meta (JSON), for keys not given a column",
    }
}

/// One row of [`DumpRows`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DumpRow {
    pub time_ns: i64,
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    pub dump: String,
    pub export_seq: String,
    pub first_chunk: i64,
    pub end_chunk: i64,
    pub from_ns: Option<i64>,
    pub to_ns: Option<i64>,
    pub kernels: i64,
    pub memcpy: i64,
    pub memset: i64,
    pub api: i64,
    pub records: i64,
    pub dropped_records: Option<i64>,
    pub dropped_records_note: Option<String>,
    pub session_open: bool,
    pub cupti_version: Option<i64>,
    pub cupti_library: Option<String>,
    pub recorder_version: Option<String>,
    pub buffer_size: Option<i64>,
    pub session_start_unix_ns: Option<i64>,
    pub session_start_cupti_ns: Option<i64>,
    pub session_start_monotonic_ns: Option<i64>,
    pub timestamp_mode: Option<String>,
    pub clock_converted: i64,
    pub off_clock: i64,
    pub unresolved_kernel_names: i64,
    pub world_size: Option<i64>,
    pub local_world_size: Option<i64>,
    pub backend: Option<String>,
    pub command: Option<String>,
    pub warnings: Vec<String>,
    pub device_properties: Option<String>,
    pub meta_json: String,
}

impl DumpRows {
    pub fn push(&mut self, r: &DumpRow, strings: &mut crate::encode::Strings) {
        let mut text = |s: &str| strings.intern(s);
        self.time_ns.push(r.time_ns);
        self.first_ns.push(r.first_ns);
        self.last_ns.push(r.last_ns);
        self.dump.push(text(&r.dump));
        self.export_seq.push(text(&r.export_seq));
        self.first_chunk.push(r.first_chunk);
        self.end_chunk.push(r.end_chunk);
        self.from_ns.push(r.from_ns);
        self.to_ns.push(r.to_ns);
        self.kernels.push(r.kernels);
        self.memcpy.push(r.memcpy);
        self.memset.push(r.memset);
        self.api.push(r.api);
        self.records.push(r.records);
        self.dropped_records.push(r.dropped_records);
        self.dropped_records_note
            .push(r.dropped_records_note.as_deref().map(&mut text));
        self.session_open.push(r.session_open);
        self.cupti_version.push(r.cupti_version);
        self.cupti_library
            .push(r.cupti_library.as_deref().map(&mut text));
        self.recorder_version
            .push(r.recorder_version.as_deref().map(&mut text));
        self.exporter_version.push(text(env!("CARGO_PKG_VERSION")));
        self.buffer_size.push(r.buffer_size);
        self.session_start_unix_ns.push(r.session_start_unix_ns);
        self.session_start_cupti_ns.push(r.session_start_cupti_ns);
        self.session_start_monotonic_ns
            .push(r.session_start_monotonic_ns);
        self.timestamp_mode
            .push(r.timestamp_mode.as_deref().map(&mut text));
        self.clock_converted.push(r.clock_converted);
        self.off_clock.push(r.off_clock);
        self.unresolved_kernel_names.push(r.unresolved_kernel_names);
        self.world_size.push(r.world_size);
        self.local_world_size.push(r.local_world_size);
        self.backend.push(r.backend.as_deref().map(&mut text));
        self.command.push(r.command.as_deref().map(&mut text));
        self.warnings.push(r.warnings.len() as i64);
        let warning_text = (!r.warnings.is_empty()).then(|| r.warnings.join("\n"));
        self.warning_text
            .push(warning_text.as_deref().map(&mut text));
        self.device_properties
            .push(r.device_properties.as_deref().map(&mut text));
        self.meta_json.push(text(&r.meta_json));
    }
}

impl crate::correlations::Correlate for DumpRows {}
