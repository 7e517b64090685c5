//! A standalone Kineto-style trace of one window: the merge into an empty CPU
//! trace whose base time follows Kineto's trimester rule.

use std::io::{self, Cursor, Read};
use std::path::Path;

use crate::merge::{merge_source, trimester_floor_ns, MergeOptions, MergeProgress, WindowSource};
use crate::{default_base_ns, MergeStats, MergeWindow, TraceError, TraceFormat};

/// Options of [`export_window`].
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    pub trace_name: Option<String>,
    /// Kineto's `deviceProperties` array (JSON text); default: the window's own.
    pub device_properties_json: Option<String>,
    /// The merge's rules only, without the complete trace's extras.
    pub exact: bool,
    /// The output's format; `None`: by its name (see [`MergeOptions::format`]).
    pub format: Option<TraceFormat>,
}

/// Write `window` as a trace of its own: schemaVersion, deviceProperties,
/// baseTimeNanoseconds (the window's first timestamp rounded down to a
/// trimester, as Kineto does), the window's events and the profiler span.
pub fn export_window(
    window: &MergeWindow,
    output: &Path,
    options: &ExportOptions,
) -> Result<MergeStats, TraceError> {
    let base_ns = window
        .first_start_ns()
        .map_or_else(default_base_ns, trimester_floor_ns);
    let bytes = export_doc(window, options, base_ns);
    let open = || -> io::Result<Box<dyn Read>> { Ok(Box::new(Cursor::new(bytes.clone()))) };
    let merge_options = MergeOptions {
        trace_name: options.trace_name.clone(),
        exact: options.exact,
        format: options.format,
        ..MergeOptions::default()
    };
    if window.is_empty() {
        return Err(TraceError::Window(
            "the window holds no events: nothing to export".to_owned(),
        ));
    }
    merge_source(
        "exported trace",
        &open,
        WindowSource::Loaded(window),
        output,
        &merge_options,
        &mut |_: MergeProgress| {},
        false,
    )
}

/// The empty CPU trace an exported window is merged into: schemaVersion,
/// deviceProperties (the options' or the window's), the rank (complete traces),
/// displayTimeUnit, `base_ns`, no events.
pub(crate) fn export_doc(window: &MergeWindow, options: &ExportOptions, base_ns: i128) -> Vec<u8> {
    let mut doc = String::from("{\"schemaVersion\":1,");
    let props = options
        .device_properties_json
        .as_ref()
        .or(window.device_properties.as_ref());
    if let Some(props) = props {
        doc.push_str("\"deviceProperties\":");
        doc.push_str(props);
        doc.push(',');
    }
    // Before traceEvents: HolisticTraceAnalysis reads the rank from a trace's head.
    if let Some(info) = window.distributed_info.as_ref().filter(|_| !options.exact) {
        doc.push_str("\"distributedInfo\": ");
        doc.push_str(&info.to_spaced_json());
        doc.push(',');
    }
    doc.push_str(&format!(
        "\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":{base_ns},\"traceEvents\":[]}}"
    ));
    doc.into_bytes()
}
