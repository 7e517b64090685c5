//! What a dump says about its process (host, rank, pid: the run columns) and its
//! session (the `dumps` row), from its meta and its directory name.

use cupmon_records::dump::pid_in_dir_name;
use cupmon_records::{DecodeReport, Dump, MetaFile};
use serde_json::Value;

use crate::datasets::DumpRow;
use crate::run_info::RunInfo;

/// The run columns of `dump`: `host` and `job` as given, else the meta's
/// `hostname` and `default_host`; rank and pid from the meta, else from a
/// `rank<R>-<pid>` or `<pid>` directory name.
pub fn run_info(dump: &Dump, job: Option<&str>, host: Option<&str>, default_host: &str) -> RunInfo {
    let meta = dump.meta().json();
    let info = meta.get("distributedInfo");
    let rank = dump.rank().and_then(|r| i32::try_from(r).ok());
    let local_rank = info
        .and_then(|i| i.get("local_rank"))
        .and_then(|v| v.as_i64().or_else(|| v.as_str()?.trim().parse().ok()))
        .and_then(|r| i32::try_from(r).ok());
    let host = host
        .map(str::to_owned)
        .or_else(|| {
            meta.get("hostname")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| default_host.to_owned());
    RunInfo {
        job: job.map(str::to_owned),
        host,
        rank,
        local_rank,
        pid: dump
            .meta()
            .pid()
            .map(|p| p as i64)
            .or_else(|| pid_in_dir_name(dump.dir()))
            .unwrap_or(0),
    }
}

/// The `dumps` row of an export of `dump`, without the export's own figures
/// (chunks, rows, times), which the caller fills in.
pub fn dump_row(dump: &Dump, report: &DecodeReport) -> DumpRow {
    let meta: &MetaFile = dump.meta();
    let json = meta.json();
    let info = json.get("distributedInfo");
    let as_i64 = |v: Option<u64>| v.and_then(|v| i64::try_from(v).ok());
    let text = |key: &str| json.get(key).and_then(Value::as_str).map(str::to_owned);
    let command = json.get("command").map(|c| match c {
        Value::String(s) => s.clone(),
        Value::Array(args) => args
            .iter()
            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    });
    DumpRow {
        time_ns: as_i64(meta.session_start_unix_ns()).unwrap_or(0),
        dump: dump.dir().display().to_string(),
        dropped_records: report.dropped_records.and_then(|d| i64::try_from(d).ok()),
        dropped_records_note: report.dropped_records_note.clone(),
        session_open: meta.session_open(),
        cupti_version: meta.cupti_version().map(i64::from),
        cupti_library: meta.cupti_library().map(str::to_owned),
        recorder_version: meta.cupmon_version().map(str::to_owned),
        buffer_size: as_i64(meta.buffer_size()),
        session_start_unix_ns: as_i64(meta.session_start_unix_ns()),
        session_start_cupti_ns: as_i64(meta.session_start_cupti_ns()),
        session_start_monotonic_ns: as_i64(meta.session_start_monotonic_ns()),
        timestamp_mode: meta.timestamp_mode().map(str::to_owned),
        clock_converted: report.clock_converted as i64,
        off_clock: report.off_clock as i64,
        world_size: info
            .and_then(|i| i.get("world_size"))
            .and_then(Value::as_i64),
        local_world_size: info
            .and_then(|i| i.get("local_world_size"))
            .and_then(Value::as_i64),
        backend: info
            .and_then(|i| i.get("backend"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        command: command.or_else(|| text("cmdline")),
        warnings: report.warnings.iter().map(ToString::to_string).collect(),
        device_properties: json.get("device_properties").map(Value::to_string),
        meta_json: Value::Object(json.clone()).to_string(),
        ..DumpRow::default()
    }
}
