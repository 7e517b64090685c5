//! Decoding a dump, or a time slice of one, into a trace window: its records in buffer
//! order as PyTorch's window events (`kinds/`), kernel names resolved and demangled.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use cupmon_records::{
    DecodeProgress, DecodeReport, Dump, DumpError, ExternalCorrelationKind, KernelNames, Record,
    Reorder, SliceWalk, TimeRange,
};

use crate::{CupmonInfo, OffClockEvents, SliceInfo, TraceWindow, WindowEvent};

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
    decode_slice_to_window(dump, &TimeRange::default(), progress)
}

/// The window of the records whose interval overlaps `range` (see
/// [`cupmon_records::walk_slice`]): `start_ns` is the slice's start, the user
/// annotations are those the kept external correlations name, and the `cupmon` block
/// says the slice. The whole dump when `range` is open at both ends.
pub fn decode_slice_to_window(
    dump: &Dump,
    range: &TimeRange,
    progress: impl FnMut(&DecodeProgress),
) -> Result<(TraceWindow, DecodeReport), DumpError> {
    let mut names = KernelNames::new(dump.kernel_names());
    let mut events = Vec::new();
    let mut off_clock = Vec::new();
    let mut annotated: HashSet<u64> = HashSet::new();
    let mut walk = SliceWalk::open(dump, range, Reorder::default())?;
    let mut progress = progress;
    while walk.next_buffer_with(|w| {
        note_annotation(w.record, &mut annotated);
        events.push(WindowEvent::from_record(w.record, &mut names));
    })? {
        off_clock_events(&walk, &mut names, &mut off_clock);
        progress(&walk.progress());
    }
    let mut report = walk.finish();
    report.unresolved_kernel_names = names.unresolved();
    let mut window = window_shell(dump, range, &mut report, &annotated)?;
    window.events = events;
    window.off_clock = OffClockEvents::of(off_clock);
    Ok((window, report))
}

/// The events of the records `walk` kept apart in its last buffer, on their own clock
/// (`cupmon_records::clock::OFF_CLOCK_RULE`), added to `out`.
pub(crate) fn off_clock_events(
    walk: &SliceWalk,
    names: &mut KernelNames,
    out: &mut Vec<WindowEvent>,
) {
    for w in walk.off_clock_records() {
        out.push(WindowEvent::from_record(&w.record, names));
    }
}

/// Annotations are named by CUSTOM1 external ids (cupmon's and Kineto's): note the one
/// `record` names.
pub(crate) fn note_annotation(record: &Record, annotated: &mut HashSet<u64>) {
    if let Record::ExternalCorrelation(x) = record {
        if x.external_kind == ExternalCorrelationKind::CUSTOM1.0 {
            annotated.insert(x.external_id);
        }
    }
}

/// The window of a decode without its events: the user annotations (those `annotated`
/// names, for a slice: only they are read from the dump; damage found reading them
/// goes into `report`'s warnings), the `cupmon` block from `report`, the meta's GPUs and
/// rank.
pub(crate) fn window_shell(
    dump: &Dump,
    range: &TimeRange,
    report: &mut DecodeReport,
    annotated: &HashSet<u64>,
) -> Result<TraceWindow, DumpError> {
    let sliced = !range.is_all();
    let user_annotations: BTreeMap<u64, String> = if sliced {
        dump.user_annotations_named(&annotated.iter().copied().collect::<BTreeSet<u64>>())?
    } else {
        dump.user_annotations()?.clone()
    };
    report.warnings.extend(dump.annotation_warnings());
    Ok(TraceWindow {
        events: Vec::new(),
        extra_activities: Vec::new(),
        user_annotations,
        thread_resource_map: BTreeMap::new(),
        start_ns: range.from_ns.unwrap_or(0),
        cupmon: Some(CupmonInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            dropped_records: report.dropped_records,
            dropped_records_note: report.dropped_records_note.clone(),
            cupti_version: Some(report.cupti_version.api()),
            unresolved_kernel_names: report.unresolved_kernel_names,
            clock_converted: report.clock_converted,
            off_clock_records: report.off_clock,
            slice: sliced.then_some(SliceInfo {
                from_ns: range.from_ns,
                to_ns: range.to_ns,
            }),
            retired: (report.retired.segments > 0).then(|| report.retired.clone()),
            clock_alignment: None,
            kernels: Some(cupmon_records::dump::KernelAccount::of(dump.meta())),
        }),
        // cupmon's monitor records the GPUs in the meta (Kineto's deviceProperties).
        device_properties: dump.meta().json().get("device_properties").cloned(),
        distributed_info: dump_distributed_info(dump),
        cpu_annotations: dump_cpu_annotations(dump, range, report),
        off_clock: None,
    })
}

/// The NVTX ranges and marks of the dump's windows (`cpu_annotations.jsonl`) that
/// overlap `range`; damage goes into `report`'s warnings.
fn dump_cpu_annotations(
    dump: &Dump,
    range: &TimeRange,
    report: &mut DecodeReport,
) -> Vec<crate::CpuAnnotation> {
    let mut kept = Vec::new();
    let from = range.from_ns.unwrap_or(0);
    let to = range.to_ns.unwrap_or(u64::MAX);
    let warnings = cupmon_records::dump::read_cpu_annotation_lines(dump.dir(), |line| {
        let a: crate::CpuAnnotation = serde_json::from_str(line)
            .map_err(|e| format!("not an NVTX range or mark ({e}): {line:?}"))?;
        // `[from, to)`, as the slice's records; a mark at `from` is in it.
        if a.end_ns >= from && a.start_ns < to {
            kept.push(a);
        }
        Ok(())
    });
    report.warnings.extend(warnings);
    kept
}

/// The dump's `distributedInfo`: the meta's (torchrun's environment), else its rank
/// (the meta's `rank`, or a `rank<R>-...` directory name) with the world size when
/// known, so that a rank's dump decoded alone is that rank in HTA and `combine`.
pub fn dump_distributed_info(dump: &Dump) -> Option<crate::DistributedInfo> {
    let meta: Option<crate::DistributedInfo> = dump
        .meta()
        .json()
        .get("distributedInfo")
        .and_then(|v| serde_json::from_value(v.clone()).ok());
    meta.or_else(|| {
        Some(crate::DistributedInfo {
            rank: dump.rank()?,
            world_size: dump.meta().world_size(),
            ..Default::default()
        })
    })
}
