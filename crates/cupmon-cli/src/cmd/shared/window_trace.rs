//! The trace of a trace window, made outside the traced process. The injection
//! library writes only `window-N.json` (the program being traced never pays for
//! JSON, gzip or Perfetto, and a bug in the merge cannot crash it); `cupmon run`
//! when the program ends, and `cupmon window` / `--window-on-signal` when they close
//! the windows, write `window-N.trace.json.gz` (or `window-N.trace.pftrace`, the
//! `trace_format` setting) beside it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cupmon_trace::{export_window, ExportOptions, MergeWindow, TraceFormat};

/// The number `N` of a window file `window-N.json`.
fn window_number(json: &Path) -> Option<u32> {
    json.file_name()?
        .to_str()?
        .strip_prefix("window-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// The format a control answer names (`None`, from an older cupmon, or one this
/// cupmon does not know: Chrome JSON, the default).
pub fn format_named(name: Option<&str>) -> TraceFormat {
    name.and_then(TraceFormat::parse).unwrap_or_default()
}

/// Write the trace of the window file `json` (`dir/window-N.json`) beside it, in
/// `format`; `pid` is the process that wrote it, for the trace's name. `Ok(None)`,
/// with a warning, for a window without records (there is nothing to draw).
pub fn write_trace(json: &Path, format: TraceFormat, pid: Option<u32>) -> Result<Option<PathBuf>> {
    let n = window_number(json)
        .with_context(|| format!("{}: not a window file (window-N.json)", json.display()))?;
    let window = MergeWindow::read(json)?;
    if window.is_empty() {
        eprintln!(
            "cupmon: warning: trace window {n} ({}) holds no records; no trace written for it",
            json.display()
        );
        return Ok(None);
    }
    let dir = json.parent().unwrap_or(Path::new("."));
    let trace = dir.join(format.window_trace_file(n));
    let pid = pid.or_else(|| pid_of_dump(dir));
    let options = ExportOptions {
        trace_name: Some(match pid {
            Some(pid) => format!("cupmon window {n} of pid {pid}"),
            None => format!("cupmon window {n}"),
        }),
        device_properties_json: None,
        exact: false,
        format: Some(format),
    };
    export_window(&window, &trace, &options)
        .with_context(|| format!("writing the trace of {}", json.display()))?;
    Ok(Some(trace))
}

/// The trace of a window a control answer named (`json` and `trace` checked to be
/// the process's own): the one the process wrote (a cupmon from before the traces
/// moved out of the process), else made now in the format the answer names.
pub fn trace_of_answer(
    json: &Path,
    trace: Option<PathBuf>,
    answer: &cupmon_control::LastWindow,
    pid: u32,
) -> Result<Option<PathBuf>> {
    match trace {
        Some(trace) => Ok(Some(trace)),
        None => write_trace(
            json,
            format_named(answer.trace_format.as_deref()),
            Some(pid),
        ),
    }
}

/// The pid a dump's meta names.
fn pid_of_dump(dir: &Path) -> Option<u32> {
    let meta = cupmon_records::MetaFile::read(dir.join(cupmon_records::dump::META_FILE)).ok()?;
    let pid = meta.json().get("pid")?.as_u64()?;
    u32::try_from(pid).ok()
}

/// Write the trace of every window of the dump `dir` that has none yet (in neither
/// format), as `cupmon run` does when the program has ended: the windows a schedule,
/// a signal or the exit closed. Problems are warnings naming the window; the traces
/// written are returned.
pub fn write_missing_traces(dir: &Path, format: TraceFormat) -> Vec<PathBuf> {
    let mut windows: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| Some((window_number(&p)?, p)))
        .collect();
    windows.sort();
    let mut written = Vec::new();
    for (n, json) in windows {
        let has_trace = TraceFormat::ALL
            .iter()
            .any(|f| dir.join(f.window_trace_file(n)).exists());
        if has_trace {
            continue;
        }
        match write_trace(&json, format, None) {
            Ok(Some(trace)) => written.push(trace),
            Ok(None) => {}
            Err(e) => eprintln!("cupmon: warning: no trace for {}: {e:#}", json.display()),
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_number_reads_only_window_files() {
        assert_eq!(window_number(Path::new("d/window-12.json")), Some(12));
        assert_eq!(window_number(Path::new("d/window-1.trace.json.gz")), None);
        assert_eq!(window_number(Path::new("d/window-x.json")), None);
        assert_eq!(window_number(Path::new("d/meta.json")), None);
    }

    #[test]
    fn an_unknown_or_missing_format_name_means_chrome_json() {
        assert_eq!(format_named(None), TraceFormat::Json);
        assert_eq!(format_named(Some("pftrace")), TraceFormat::Pftrace);
        assert_eq!(format_named(Some("svg")), TraceFormat::Json);
    }

    #[test]
    fn a_window_without_records_gets_no_trace() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("window-0.json");
        std::fs::write(
            &json,
            br#"{"events":[],"extra_activities":[],"user_annotations":{},"thread_resource_map":{},"start_ns":0}"#,
        )
        .unwrap();
        assert_eq!(
            write_missing_traces(dir.path(), TraceFormat::Json),
            Vec::<PathBuf>::new()
        );
        assert!(!dir.path().join("window-0.trace.json.gz").exists());
    }

    #[test]
    fn regression_a_ranks_window_trace_made_outside_the_process_lost_its_distributed_info() {
        // The H200's torchrun check: once traces were made from window-N.json by
        // `cupmon run` / `cupmon window`, the rank the window file carries was dropped.
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/h200-cupti13.0/cuda_workload/expected_window.json");
        let mut window: serde_json::Value =
            serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
        window["distributedInfo"] =
            serde_json::json!({"backend": "nccl", "rank": 1, "world_size": 2});
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("window-0.json");
        std::fs::write(&json, serde_json::to_vec(&window).unwrap()).unwrap();
        let trace = write_trace(&json, TraceFormat::Json, Some(7))
            .unwrap()
            .unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(trace).unwrap()),
            &mut text,
        )
        .unwrap();
        let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            trace["distributedInfo"]["rank"], 1,
            "{}",
            trace["distributedInfo"]
        );
        assert_eq!(trace["distributedInfo"]["world_size"], 2);
    }
}
