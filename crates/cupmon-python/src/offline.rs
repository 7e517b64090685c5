//! The offline functions: merge a window into a torch.profiler CPU trace,
//! export a window as a trace of its own, decode a raw dump into a window.
//! Each runs with the GIL released (`py.detach`): they read and write files
//! for seconds on large traces, and other Python threads must go on.

use std::path::PathBuf;

use cupmon_trace::decode_dump_to_window;
use cupmon_trace::{
    export_window, merge_files, ExportOptions, MergeOptions, MergeStats, MergeWindow, TraceFormat,
    WindowSource,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::error::Failure;

/// Name of an in-memory window in error messages.
const WINDOW_ARG: &str = "trace_window";

/// `format="json"` / `"pftrace"` ([`TraceFormat`]'s names); `None`: by the output's name.
fn trace_format(format: Option<&str>) -> PyResult<Option<TraceFormat>> {
    format
        .map(|f| {
            TraceFormat::parse(f).ok_or_else(|| {
                let names: Vec<String> = TraceFormat::ALL
                    .iter()
                    .map(|t| format!("'{}'", t.name()))
                    .collect();
                PyValueError::new_err(format!(
                    "format must be {} or None (by the output's name), not {f:?}",
                    names.join(", ")
                ))
            })
        })
        .transpose()
}

/// The trace files window `number` of a dump directory may have, by format name
/// (`TraceFormat::window_trace_file`): what the monitor's Python side looks for.
#[pyfunction]
pub fn window_trace_files(number: u32) -> Vec<(&'static str, String)> {
    TraceFormat::ALL
        .iter()
        .map(|f| (f.name(), f.window_trace_file(number)))
        .collect()
}

/// Merge a window given as JSON bytes into `cpu_trace_path`, writing `output_path`.
#[pyfunction]
#[pyo3(signature = (cpu_trace_path, output_path, window_json, trace_name=None, exact=true, format=None))]
pub fn merge_json<'py>(
    py: Python<'py>,
    cpu_trace_path: PathBuf,
    output_path: PathBuf,
    window_json: &[u8],
    trace_name: Option<String>,
    exact: bool,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let format = trace_format(format)?;
    let stats = py.detach(|| -> Result<MergeStats, Failure> {
        let window = MergeWindow::from_json(window_json, WINDOW_ARG)?;
        Ok(merge_files(
            &cpu_trace_path,
            WindowSource::Loaded(&window),
            &output_path,
            &MergeOptions {
                trace_name,
                exact,
                format,
                ..MergeOptions::default()
            },
            &mut |_| {},
        )?)
    })?;
    stats_dict(py, &stats)
}

/// Merge a window JSON file (`.gz` allowed) into `cpu_trace_path`.
#[pyfunction]
#[pyo3(signature = (cpu_trace_path, output_path, window_path, trace_name=None, exact=true, format=None))]
pub fn merge_file<'py>(
    py: Python<'py>,
    cpu_trace_path: PathBuf,
    output_path: PathBuf,
    window_path: PathBuf,
    trace_name: Option<String>,
    exact: bool,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let format = trace_format(format)?;
    let stats = py.detach(|| -> Result<MergeStats, Failure> {
        Ok(merge_files(
            &cpu_trace_path,
            WindowSource::File(&window_path),
            &output_path,
            &MergeOptions {
                trace_name,
                exact,
                format,
                ..MergeOptions::default()
            },
            &mut |_| {},
        )?)
    })?;
    stats_dict(py, &stats)
}

/// Write a window (JSON bytes) as a standalone Kineto-style trace.
#[pyfunction]
#[pyo3(signature = (window_json, output_path, trace_name=None, exact=false, format=None))]
pub fn export_json<'py>(
    py: Python<'py>,
    window_json: &[u8],
    output_path: PathBuf,
    trace_name: Option<String>,
    exact: bool,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let format = trace_format(format)?;
    let stats = py.detach(|| -> Result<MergeStats, Failure> {
        let window = MergeWindow::from_json(window_json, WINDOW_ARG)?;
        let options = ExportOptions {
            trace_name,
            device_properties_json: None,
            exact,
            format,
        };
        Ok(export_window(&window, &output_path, &options)?)
    })?;
    stats_dict(py, &stats)
}

/// Write a window JSON file (`.gz` allowed) as a standalone trace.
#[pyfunction]
#[pyo3(signature = (window_path, output_path, trace_name=None, exact=false, format=None))]
pub fn export_file<'py>(
    py: Python<'py>,
    window_path: PathBuf,
    output_path: PathBuf,
    trace_name: Option<String>,
    exact: bool,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let format = trace_format(format)?;
    let stats = py.detach(|| -> Result<MergeStats, Failure> {
        let window = MergeWindow::read(&window_path)?;
        let options = ExportOptions {
            trace_name,
            device_properties_json: None,
            exact,
            format,
        };
        Ok(export_window(&window, &output_path, &options)?)
    })?;
    stats_dict(py, &stats)
}

/// Decode a raw dump directory: `(window JSON bytes, warnings)`. The warnings
/// (a truncated last chunk, skipped garbage, dropped records) say the window
/// is incomplete; the Python side turns them into `warnings.warn`.
#[pyfunction]
pub fn read_dump_json(py: Python<'_>, path: PathBuf) -> PyResult<(Py<PyBytes>, Vec<String>)> {
    let (json, warnings) = py.detach(|| -> Result<_, Failure> {
        let (window, report) =
            decode_dump_to_window(&path, |_| {}).map_err(|e| Failure::from_dump(e, &path))?;
        let mut warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
        if let Some(dropped) = report.dropped_records.filter(|&d| d > 0) {
            warnings.push(format!(
                "{}: CUPTI dropped {dropped} records while recording this dump",
                path.display()
            ));
        }
        if report.unresolved_kernel_names > 0 {
            warnings.push(format!(
                "{}: {} kernel records have no name in kernel_names.tsv (shown as kernel@0x...)",
                path.display(),
                report.unresolved_kernel_names
            ));
        }
        // Serialising a window we built cannot fail (plain strings and numbers).
        let json = serde_json::to_vec(&window).unwrap_or_default();
        Ok((json, warnings))
    })?;
    Ok((PyBytes::new(py, &json).unbind(), warnings))
}

fn stats_dict<'py>(py: Python<'py>, stats: &MergeStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("cpu_events_kept", stats.cpu_events_kept)?;
    d.set_item("cpu_events_replaced", stats.cpu_events_replaced)?;
    d.set_item("window_events", stats.window_events)?;
    d.set_item("events_written", stats.events_written)?;
    if let Some(p) = &stats.pftrace {
        let pf = PyDict::new(py);
        pf.set_item("bytes", p.bytes)?;
        pf.set_item("slices", p.slices)?;
        pf.set_item("instants", p.instants)?;
        pf.set_item("counter_values", p.counter_values)?;
        pf.set_item("flow_events_bound", p.flow_events_bound)?;
        pf.set_item("flow_events_unbound", p.flow_events_unbound)?;
        pf.set_item("overlap_slices", p.overlap_slices)?;
        pf.set_item("warnings", p.warnings())?;
        d.set_item("pftrace", pf)?;
    }
    Ok(d)
}
