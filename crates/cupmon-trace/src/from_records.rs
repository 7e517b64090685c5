//! Decoding a whole dump into a trace window: every record in buffer order as
//! PyTorch's window events (`kinds/`), kernel names resolved and demangled.

use std::collections::BTreeMap;
use std::path::Path;

use cupmon_records::{walk_records, DecodeProgress, DecodeReport, Dump, DumpError, KernelNames};

use crate::{CupmonInfo, TraceWindow, WindowEvent};

/// Decode the dump in `dir` into a trace window (all records in buffer order, `start_ns`
/// 0, the dump's user annotations) plus a report of counts and warnings.
pub fn decode_dump_to_window(
    dir: impl AsRef<Path>,
    progress: impl FnMut(&DecodeProgress),
) -> Result<(TraceWindow, DecodeReport), DumpError> {
    let dump = Dump::open(dir)?;
    decode_to_window(&dump, progress)
}

/// [`decode_dump_to_window`] for a dump already opened.
pub fn decode_to_window(
    dump: &Dump,
    progress: impl FnMut(&DecodeProgress),
) -> Result<(TraceWindow, DecodeReport), DumpError> {
    let mut names = KernelNames::new(dump.kernel_names());
    let mut events = Vec::new();
    let mut report = walk_records(dump, progress, |_, _, record| {
        events.push(WindowEvent::from_record(record, &mut names));
    })?;
    report.unresolved_kernel_names = names.unresolved();
    let window = TraceWindow {
        events,
        extra_activities: Vec::new(),
        user_annotations: dump.user_annotations().clone(),
        thread_resource_map: BTreeMap::new(),
        start_ns: 0,
        cupmon: Some(CupmonInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            dropped_records: report.dropped_records,
            dropped_records_note: report.dropped_records_note.clone(),
            cupti_version: Some(report.cupti_version.api()),
            unresolved_kernel_names: report.unresolved_kernel_names,
            clock_converted: report.clock_converted,
            off_clock_records: report.off_clock,
        }),
        // cupmon's monitor records the GPUs in the meta (Kineto's deviceProperties).
        device_properties: dump.meta().json().get("device_properties").cloned(),
        distributed_info: dump
            .meta()
            .json()
            .get("distributedInfo")
            .and_then(|v| serde_json::from_value(v.clone()).ok()),
    };
    Ok((window, report))
}
