//! Streamed decodes ([`write_window_stream`], [`DumpExport`]) write the same bytes as
//! the in-memory path (the whole window decoded, then serialised or exported) on the
//! H200 fixture dumps and on a segmented dump with every join the export makes (API
//! calls and kernels in different buffers, completed out of order, CPU-op and
//! annotation external correlations, kernels overlapping on a stream), whole and
//! sliced; and a join whose two sides lie further apart than the reorder window is
//! not made, as documented.

use std::path::Path;
use std::time::Duration;

use cupmon_records::dump::{BufferCompletion, FrameIndex, SegmentPolicy};
use cupmon_records::{
    ActivityKind, ApiRecord, Dump, DumpWriter, ExternalCorrelationRecord, KernelRecord, Layout,
    MemcpyRecord, MetaFile, OverheadRecord, Record, RecordIter, RecordWriter, Reorder, TimeRange,
};
use cupmon_trace::{
    decode_slice_to_window, export_window, write_window_stream, DumpExport, ExportOptions,
    MergeWindow, TraceFormat,
};
use serde_json::Value;

use super::common::{fixture_dir, FIXTURES};

const T0: u64 = 1_796_135_520_000_000_000;
const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn kernel(start: u64, end: u64, stream: u32, correlation: u32) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end,
        completed: end,
        device_id: 0,
        context_id: 1,
        stream_id: stream,
        correlation_id: correlation,
        grid_x: 64,
        grid_y: 1,
        grid_z: 1,
        block_x: 128,
        block_y: 1,
        block_z: 1,
        registers_per_thread: 32,
        name_ptr: 0x1000 + u64::from(correlation % 3) * 0x40,
        ..KernelRecord::default()
    })
}

fn external(kind: u32, id: u64, correlation: u32) -> Record {
    Record::ExternalCorrelation(ExternalCorrelationRecord {
        kind: ActivityKind::EXTERNAL_CORRELATION,
        external_kind: kind,
        external_id: id,
        correlation_id: correlation,
    })
}

fn launch(start: u64, correlation: u32) -> Record {
    Record::Api(ApiRecord {
        kind: ActivityKind::RUNTIME,
        cbid: 211, // cudaLaunchKernel
        start,
        end: start + 5 * US,
        process_id: 4242,
        thread_id: 4243,
        correlation_id: correlation,
        return_value: 0,
    })
}

/// `buffers` as a segmented dump in `dir`, each completed when `completed` says, with
/// kernel names and annotations 500.. ("step N").
fn write_dump(dir: &Path, buffers: &[(u64, Vec<Record>)]) {
    let layout = Layout::cupti_13_0();
    let mut meta = MetaFile::new();
    meta.set("cupti_version", 130_000)
        .set("buffer_size", 1 << 20)
        .set("session_open", false)
        .set("dropped_records", 0)
        .set("chunks_written", buffers.len() as u64);
    let policy = SegmentPolicy {
        segment_size: 16 << 10,
        segment_period: Duration::from_secs(3600),
        keep: 1 << 40,
        keep_for: None,
    };
    let mut w = DumpWriter::create_segmented(dir, &meta, policy).unwrap();
    for f in 0..3u64 {
        w.add_kernel_name(0x1000 + f * 0x40, &format!("_Z7kernel{f}v"))
            .unwrap();
    }
    for step in 0..40u64 {
        w.add_user_annotation(500 + step, &format!("step {step}"))
            .unwrap();
    }
    for (completed, records) in buffers {
        let mut rw = RecordWriter::new(layout);
        let mut index = FrameIndex::default();
        for r in records {
            rw.push(r);
            index.add(r);
        }
        let data = rw.into_bytes();
        assert_eq!(RecordIter::new(&data, layout).count(), records.len());
        let completion = BufferCompletion {
            stream_id: 0,
            context: 1,
            cupti_completed_ns: *completed,
            unix_completed_ns: *completed,
        };
        w.write_buffer(completion, &data, Some(layout), &index, false)
            .unwrap();
    }
    w.finish().unwrap();
}

/// 4 s of launches, one every 2 ms on streams 7 and 8, each under annotation
/// 500 + (its 100 ms step) and every 5th also under a CPU op; every 7th kernel starts
/// before the previous one on its stream has ended. API buffers (100 ms each) are
/// completed 30 ms after the GPU buffer of the same launches, which comes first in
/// the dump; an overhead record now and then, and a copy per step.
fn rich_dump(dir: &Path) {
    let mut buffers = Vec::new();
    let mut correlation = 0u32;
    for step in 0..40u64 {
        let t = T0 + step * 100 * MS;
        let (mut api, mut gpu) = (Vec::new(), Vec::new());
        let mut last_end = [t; 2];
        for i in 0..50u64 {
            correlation += 1;
            let start = t + i * 2 * MS;
            api.push(external(4, 500 + step, correlation));
            if correlation.is_multiple_of(5) {
                api.push(external(3, 9000 + u64::from(correlation), correlation));
            }
            api.push(launch(start, correlation));
            let s = (i % 2) as usize;
            let k_start = if correlation.is_multiple_of(7) {
                last_end[s] - 500 * US
            } else {
                (start + 100 * US).max(last_end[s])
            };
            let k_end = k_start + 1500 * US;
            last_end[s] = k_end;
            gpu.push(kernel(k_start, k_end, 7 + s as u32, correlation));
        }
        correlation += 1;
        gpu.push(Record::Memcpy(MemcpyRecord {
            kind: ActivityKind::MEMCPY,
            copy_kind: 1,
            src_kind: 2,
            dst_kind: 3,
            bytes: 1 << 20,
            start: t + 99 * MS,
            end: t + 99 * MS + 300 * US,
            device_id: 0,
            context_id: 1,
            stream_id: 9,
            correlation_id: correlation,
            ..MemcpyRecord::default()
        }));
        if step % 10 == 3 {
            api.push(Record::Overhead(OverheadRecord {
                kind: ActivityKind::OVERHEAD,
                overhead_kind: 1,
                object_kind: 2,
                object_id: [4242, 4243, 0],
                start: t + 10 * MS,
                end: t + 11 * MS,
                ..OverheadRecord::default()
            }));
        }
        let gpu_done = t + 102 * MS;
        buffers.push((gpu_done, gpu));
        buffers.push((gpu_done + 30 * MS, api));
    }
    write_dump(dir, &buffers);
}

/// The in-memory window of `range`, as JSON bytes, and its events.
fn in_memory(dump: &Dump, range: &TimeRange) -> (Vec<u8>, MergeWindow, usize) {
    let (window, _) = decode_slice_to_window(dump, range, |_| {}).unwrap();
    let n = window.events.len();
    (
        serde_json::to_vec(&window).unwrap(),
        MergeWindow::from(&window),
        n,
    )
}

fn streamed_window(dump: &Dump, range: &TimeRange, reorder: Reorder) -> Vec<u8> {
    let mut out = Vec::new();
    write_window_stream(dump, range, reorder, &mut out, true, |_| {}).unwrap();
    out
}

/// The exported trace of the in-memory window and the streamed one, as bytes.
fn traces(
    dir: &Path,
    dump: &Dump,
    range: &TimeRange,
    window: &MergeWindow,
    exact: bool,
    reorder: Reorder,
) -> (Vec<u8>, Vec<u8>, u64) {
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    let options = ExportOptions {
        trace_name: Some("t".into()),
        device_properties_json: None,
        exact,
        format: None,
    };
    export_window(window, &a, &options).unwrap();
    let export = DumpExport::survey(dump, range, reorder, exact, |_| {}).unwrap();
    let late = export.late_lanes();
    assert_eq!(export.events(), window.len());
    export.write(&b, Some("t".into()), None, |_| {}).unwrap();
    (std::fs::read(a).unwrap(), std::fs::read(b).unwrap(), late)
}

fn check_same(name: &str, dump: &Dump, range: &TimeRange) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let (want, window, n) = in_memory(dump, range);
    let reorder = Reorder::default();
    assert!(
        streamed_window(dump, range, reorder) == want,
        "{name} {range:?}: streamed window differs"
    );
    if n == 0 {
        return 0;
    }
    for exact in [false, true] {
        let (want, got, late) = traces(tmp.path(), dump, range, &window, exact, reorder);
        assert_eq!(late, 0, "{name}");
        assert!(
            got == want,
            "{name} {range:?} exact={exact}: streamed trace differs"
        );
    }
    n
}

/// The Perfetto trace (the same JSON text through the conversion) is the same too.
fn same_pftrace(name: &str, dump: &Dump) {
    let tmp = tempfile::tempdir().unwrap();
    let (_, window, _) = in_memory(dump, &TimeRange::default());
    let (a, b) = (tmp.path().join("a.pftrace"), tmp.path().join("b.pftrace"));
    let options = ExportOptions {
        trace_name: Some("t".into()),
        device_properties_json: None,
        exact: false,
        format: None,
    };
    export_window(&window, &a, &options).unwrap();
    DumpExport::survey(
        dump,
        &TimeRange::default(),
        Reorder::default(),
        false,
        |_| {},
    )
    .unwrap()
    .write(&b, Some("t".into()), Some(TraceFormat::Pftrace), |_| {})
    .unwrap();
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    // The first packet holds the wall-clock time the trace was written at (a clock
    // snapshot): skip it, the rest must be the same.
    let first = usize::from(a[1]) + 2;
    assert!(
        a.len() > 100 && a[0] == 10 && a[1] < 128,
        "{name}: not a TracePacket first"
    );
    assert!(
        a[first..] == b[first..],
        "{name}: streamed .pftrace differs"
    );
}

#[test]
fn streamed_windows_and_traces_equal_the_in_memory_ones_on_the_fixtures() {
    // torch_transformer: a segmented dump with a GPU's properties and torch.profiler's
    // clock converted.
    let dirs = FIXTURES.map(fixture_dir);
    let transformer = fixture_dir("torch_transformer").join("dump");
    for dir in dirs.iter().chain([&transformer]) {
        let fixture = dir.display().to_string();
        let fixture = fixture.as_str();
        let dump = Dump::open(dir).unwrap();
        let span = dump.time_span().unwrap();
        let (first, last) = span.get().unwrap();
        let mid = first + (last - first) / 2;
        assert!(check_same(fixture, &dump, &TimeRange::default()) > 0);
        same_pftrace(fixture, &dump);
        assert!(check_same(fixture, &dump, &TimeRange::new(None, Some(mid))) > 0);
        assert!(check_same(fixture, &dump, &TimeRange::new(Some(mid), None)) > 0);
    }
}

#[test]
fn streamed_windows_and_traces_equal_the_in_memory_ones_on_a_dump_with_every_join() {
    let tmp = tempfile::tempdir().unwrap();
    rich_dump(tmp.path());
    let dump = Dump::open(tmp.path()).unwrap();
    let n = check_same("rich", &dump, &TimeRange::default());
    // Per step 50 launches (annotation, call, kernel), the CPU ops of every 5th
    // correlation id, a copy; 4 overheads.
    assert_eq!(n, 6444);
    // The joins are there to be made: CPU-op links, overlap tracks, annotation spans.
    let (_, window, _) = in_memory(&dump, &TimeRange::default());
    let out = tmp.path().join("full.json");
    let options = ExportOptions {
        trace_name: None,
        device_properties_json: None,
        exact: false,
        format: None,
    };
    export_window(&window, &out, &options).unwrap();
    let trace: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let has = |f: &dyn Fn(&Value) -> bool| events.iter().any(f);
    assert!(has(
        &|e| e["cat"] == "kernel" && e["args"]["External id"].is_i64()
    ));
    assert!(has(&|e| e["cat"] == "gpu_user_annotation"));
    assert!(has(&|e| e["args"]["name"]
        .as_str()
        .is_some_and(|n| n.contains("(overlap)"))));
    for (from, to) in [(1000, 1500), (0, 250), (3900, 4100), (1234, 1235)] {
        let range = TimeRange::new(Some(T0 + from * MS), Some(T0 + to * MS));
        assert!(check_same("rich", &dump, &range) > 0, "{from}..{to} ms");
    }
}

#[test]
fn joins_further_apart_than_the_reorder_window_are_not_made() {
    let tmp = tempfile::tempdir().unwrap();
    // The kernel's buffer is completed 10 s before its launch's (API, CUSTOM0 and
    // CUSTOM1 records), another kernel's 1 ms before.
    let buffers = vec![
        (T0 + MS, vec![kernel(T0, T0 + 500 * US, 7, 1)]),
        (T0 + 2 * MS, vec![kernel(T0 + MS, T0 + MS + 500 * US, 7, 2)]),
        (
            T0 + 3 * MS,
            vec![
                external(4, 500, 2),
                external(3, 77, 2),
                launch(T0 + 500 * US, 2),
            ],
        ),
        (
            T0 + 10_000 * MS,
            vec![
                external(4, 500, 1),
                external(3, 66, 1),
                launch(T0 - 100 * US, 1),
                // In the slice below, so that the time index lets the slice read this.
                Record::Overhead(OverheadRecord {
                    kind: ActivityKind::OVERHEAD,
                    overhead_kind: 1,
                    object_kind: 2,
                    object_id: [4242, 4243, 0],
                    start: T0 + 100 * US,
                    end: T0 + 200 * US,
                    ..OverheadRecord::default()
                }),
            ],
        ),
    ];
    write_dump(tmp.path(), &buffers);
    let dump = Dump::open(tmp.path()).unwrap();
    let all = TimeRange::default();
    let (want, window, _) = in_memory(&dump, &all);
    // Within the default window (60 s) everything joins.
    assert!(streamed_window(&dump, &all, Reorder::default()) == want);
    let (a, b, _) = traces(tmp.path(), &dump, &all, &window, false, Reorder::default());
    assert!(a == b);
    // A 1 s window: kernel 1 loses its CPU op and its place in the annotation's span.
    let second = Reorder {
        window_ns: 1_000 * MS,
        ..Reorder::default()
    };
    let (a, b, _) = traces(tmp.path(), &dump, &all, &window, false, second);
    let kernel_args = |bytes: &[u8], correlation: i64| -> Value {
        let trace: Value = serde_json::from_slice(bytes).unwrap();
        let events = trace["traceEvents"].as_array().unwrap().clone();
        events
            .into_iter()
            .find(|e| e["cat"] == "kernel" && e["args"]["correlation"] == correlation)
            .unwrap()["args"]
            .clone()
    };
    assert_eq!(kernel_args(&a, 1)["External id"], 66);
    assert_eq!(kernel_args(&b, 1)["External id"], Value::Null);
    assert_eq!(kernel_args(&b, 2)["External id"], 77, "1 ms apart: joined");
    let span = |bytes: &[u8]| -> f64 {
        let trace: Value = serde_json::from_slice(bytes).unwrap();
        let events = trace["traceEvents"].as_array().unwrap().clone();
        let s = events
            .into_iter()
            .find(|e| e["cat"] == "gpu_user_annotation")
            .unwrap();
        s["dur"].as_f64().unwrap()
    };
    assert!(span(&b) < span(&a), "the span covers kernel 2 only");
    // A slice keeps a timeless record only when its partner is within the window:
    // kernel 1's external correlations are 10 s away from it.
    let slice = TimeRange::new(Some(T0), Some(T0 + 400 * US));
    let mut out = Vec::new();
    write_window_stream(&dump, &slice, second, &mut out, true, |_| {}).unwrap();
    let w: Value = serde_json::from_slice(&out).unwrap();
    let kinds: Vec<&str> = w["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["kernel", "overhead"]);
    let mut out = Vec::new();
    write_window_stream(&dump, &slice, Reorder::default(), &mut out, true, |_| {}).unwrap();
    let w: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        w["events"].as_array().unwrap().len(),
        4,
        "and the two external correlations"
    );
}
