//! Regression: GPU ops whose CUPTI timestamps are 0 (unknown) were drawn at ts 0,
//! months before the rest (1970 in an exported trace), stretching the timeline.
//! Complete traces leave them out and count them per kind in their `cupmon` block;
//! PyTorch's merge (`exact`) still draws them at 0. torch_mlp has 48 of them (42
//! kernels, 4 copies, 2 memsets with start = end = 0).

use std::collections::BTreeMap;
use std::path::Path;

use super::common::fixture_dir;
use super::pftrace::pf;
use cupmon_records::TimeRange;
use cupmon_records::{dump_stats_slice, walk_slice, ActivityKind, Dump, Record, Reorder};
use cupmon_trace::{
    decode_to_window, export_window, merge_files, DumpExport, ExportOptions, MergeOptions,
    MergeWindow, TraceFormat, WindowSource,
};
use serde_json::{json, Value};

const GPU_CATS: [&str; 3] = ["kernel", "gpu_memcpy", "gpu_memset"];

/// A GPU op may start this long (µs) before the trace's first CPU event: clock
/// conversion and a launch's own latency, nothing like the months of a ts of 0.
const SLACK_US: f64 = 1_000.0;

fn dump() -> Dump {
    Dump::open(fixture_dir("torch_mlp")).expect("open torch_mlp")
}

/// Zero-start GPU records per trace `cat`, counted from the dump's raw records.
fn zero_start_records(dump: &Dump) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    walk_slice(
        dump,
        &TimeRange::default(),
        |_| {},
        |_, _, record| {
            let (cat, start) = match record {
                Record::Kernel(k) => ("kernel", k.start),
                Record::Memcpy(m) => ("gpu_memcpy", m.start),
                Record::Memset(m) => ("gpu_memset", m.start),
                _ => return,
            };
            if start == 0 {
                *counts.entry(cat.to_owned()).or_insert(0) += 1;
            }
        },
    )
    .expect("walk");
    counts
}

/// GPU records per trace `cat`, as `cupmon stats` counts them.
fn stats_by_cat(dump: &Dump) -> BTreeMap<String, u64> {
    let stats = dump_stats_slice(dump, &TimeRange::default(), 0, |_| {}).expect("stats");
    let mut counts = BTreeMap::new();
    for (kind, n) in &stats.report.records_by_kind {
        let cat = match *kind {
            ActivityKind::CONCURRENT_KERNEL | ActivityKind::KERNEL => "kernel",
            ActivityKind::MEMCPY => "gpu_memcpy",
            ActivityKind::MEMSET => "gpu_memset",
            _ => continue,
        };
        *counts.entry(cat.to_owned()).or_insert(0) += n;
    }
    counts
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("a JSON trace")
}

fn is_gpu_op(e: &Value) -> bool {
    e["ph"] == "X" && GPU_CATS.iter().any(|c| e["cat"] == *c)
}

/// `(cat, count)` of the trace's GPU ops.
fn gpu_ops_by_cat(trace: &Value) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for e in events(trace).iter().filter(|e| is_gpu_op(e)) {
        *counts
            .entry(e["cat"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
    }
    counts
}

fn events(trace: &Value) -> &Vec<Value> {
    trace["traceEvents"].as_array().expect("traceEvents")
}

/// The earliest ts of the trace's CPU events: torch.profiler's ops and the CUDA
/// runtime and driver calls.
fn first_cpu_ts(trace: &Value) -> f64 {
    events(trace)
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter(|e| {
            let cat = e["cat"].as_str().unwrap_or("");
            cat == "cpu_op" || cat == "cuda_runtime" || cat == "cuda_driver"
        })
        .map(|e| e["ts"].as_f64().expect("ts"))
        .fold(f64::INFINITY, f64::min)
}

/// What every complete trace of torch_mlp must hold: no GPU op (or its flow end)
/// at 0 or before the CPU side, the count of those left out in the `cupmon` block,
/// and every other GPU op.
fn check_complete(trace: &Value, what: &str) {
    let dump = dump();
    let zero = zero_start_records(&dump);
    assert_eq!(
        zero.values().sum::<u64>(),
        48,
        "torch_mlp's zero-start GPU records"
    );
    let first_cpu = first_cpu_ts(trace);
    assert!(
        first_cpu.is_finite() && first_cpu > 0.0,
        "{what}: CPU events"
    );
    for e in events(trace) {
        let on_gpu = is_gpu_op(e) || (e["ph"] == "f" && e["cat"] == "ac2g");
        if !on_gpu {
            continue;
        }
        let ts = e["ts"].as_f64().expect("ts");
        assert!(ts > 0.0, "{what}: a GPU event at ts 0: {e}");
        assert!(
            ts >= first_cpu - SLACK_US,
            "{what}: a GPU event at {ts} µs, the first CPU event at {first_cpu} µs: {e}"
        );
    }
    let left_out = &trace["cupmon"]["untimed_gpu_ops"];
    let want: serde_json::Map<String, Value> =
        zero.iter().map(|(k, &n)| (k.clone(), json!(n))).collect();
    assert_eq!(left_out, &Value::Object(want), "{what}: the count left out");
    let mut kept = stats_by_cat(&dump);
    for (cat, n) in &zero {
        *kept.get_mut(cat).expect("a kind stats counts") -= n;
    }
    assert_eq!(
        gpu_ops_by_cat(trace),
        kept,
        "{what}: every timed GPU op is there"
    );
}

fn export_dump(out: &Path, exact: bool) -> cupmon_trace::DumpExportStats {
    let dump = dump();
    let export = DumpExport::survey(
        &dump,
        &TimeRange::default(),
        Reorder::default(),
        exact,
        |_| {},
    )
    .expect("survey");
    assert_eq!(export.late_lanes(), 0, "untimed ops are no late lanes");
    export.write(out, None, None, |_| {}).expect("write")
}

#[test]
fn a_streamed_decode_leaves_out_gpu_ops_without_a_time_and_counts_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.json");
    let stats = export_dump(&path, false);
    let trace = read_json(&path);
    check_complete(&trace, "decode --format chrome");
    let u = stats.merge.untimed_gpu_ops;
    assert_eq!((u.kernel, u.memcpy, u.memset, u.total()), (42, 4, 2, 48));
}

#[test]
fn an_exported_window_leaves_out_gpu_ops_without_a_time_and_counts_them() {
    let (window, _) = decode_to_window(&dump(), |_| {}).expect("decode");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.json");
    let stats = export_window(
        &MergeWindow::from(&window),
        &path,
        &ExportOptions::default(),
    )
    .expect("export");
    check_complete(&read_json(&path), "export");
    assert_eq!(stats.untimed_gpu_ops.total(), 48);
    // The window itself keeps every record: only traces leave them out.
    assert_eq!(
        window.events.len() as u64,
        dump_stats_slice(&dump(), &TimeRange::default(), 0, |_| {})
            .unwrap()
            .report
            .records
    );
}

#[test]
fn a_merge_into_a_cpu_trace_leaves_them_out_and_says_so_without_a_cupmon_window() {
    let fixture = fixture_dir("torch_mlp");
    // The dump's records on Unix time (the fixture's expected_window.json, PyTorch's,
    // keeps them on Kineto's clock), without a `cupmon` block, as PyTorch writes windows.
    let (mut window, _) = decode_to_window(&dump(), |_| {}).expect("decode");
    window.cupmon = None;
    let window = MergeWindow::from(&window);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("m.json");
    merge_files(
        &fixture.join("kineto_cpu_trace.json"),
        WindowSource::Loaded(&window),
        &path,
        &MergeOptions::default(),
        &mut |_| {},
    )
    .expect("merge");
    let trace = read_json(&path);
    check_complete(&trace, "merge");
    assert_eq!(
        trace["cupmon"]["version"],
        env!("CARGO_PKG_VERSION"),
        "the block names who left them out"
    );
    assert!(
        trace["cupmon"].get("dropped_records").is_none(),
        "a window that does not say what was dropped is not made to say it"
    );
}

#[test]
fn exact_traces_still_draw_them_at_zero_as_pytorchs_merge_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.json");
    let stats = export_dump(&path, true);
    assert!(stats.merge.untimed_gpu_ops.is_empty());
    let trace = read_json(&path);
    let at_zero = events(&trace)
        .iter()
        .filter(|e| is_gpu_op(e) && e["ts"].as_f64() == Some(0.0))
        .count();
    assert_eq!(at_zero, 48);
    assert!(trace["cupmon"].get("untimed_gpu_ops").is_none());
}

#[test]
fn a_pftrace_carries_the_count_in_its_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.pftrace");
    let dump = dump();
    let export = DumpExport::survey(
        &dump,
        &TimeRange::default(),
        Reorder::default(),
        false,
        |_| {},
    )
    .expect("survey");
    export
        .write(&path, None, Some(TraceFormat::Pftrace), |_| {})
        .expect("write");
    let model = pf::model(&pf::decode(&std::fs::read(&path).expect("read")));
    let meta: BTreeMap<_, _> = model.metadata.iter().cloned().collect();
    let block = match &meta["cupmon"] {
        pf::A::Json(text) => serde_json::from_str::<Value>(text).expect("json"),
        other => panic!("cupmon metadata: {other:?}"),
    };
    assert_eq!(
        block["untimed_gpu_ops"],
        json!({"kernel": 42, "gpu_memcpy": 4, "gpu_memset": 2})
    );
    assert!(
        model
            .events
            .iter()
            .all(|e| e.ts > 1_000_000_000_000_000_000),
        "no event near 1970"
    );
}

/// A memory record without a time is left out too but still counts for the bytes
/// held after it; a kernel still running at a forced flush (end 0) stays, at its
/// start with duration 0.
const MIXED: &str = r#"{"events": [
 {"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"correlation_id":1,"start_ns":1790000000000010000,"end_ns":1790000000000020000,"name":"timed"},
 {"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"correlation_id":2,"start_ns":1790000000000025000,"end_ns":0,"name":"running"},
 {"kind":"kernel","device_id":0,"stream_id":9,"context_id":1,"correlation_id":3,"start_ns":0,"end_ns":0,"name":"untimed"},
 {"kind":"gpu_memory","device_id":0,"stream_id":7,"timestamp_ns":0,"operation":1,"address":4096,"bytes":1048576,"memory_kind":3,"name":"[memory]"},
 {"kind":"gpu_memory","device_id":0,"stream_id":7,"timestamp_ns":1790000000000030000,"operation":1,"address":8192,"bytes":4096,"memory_kind":3,"name":"[memory]"}
], "user_annotations": {}, "thread_resource_map": {}, "start_ns": 0}"#;

#[test]
fn untimed_memory_records_are_counted_and_unfinished_kernels_kept() {
    let window = MergeWindow::from_json(MIXED.as_bytes(), "test window").expect("window");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.json");
    let stats = export_window(&window, &path, &ExportOptions::default()).expect("export");
    let trace = read_json(&path);
    assert_eq!(
        trace["cupmon"]["untimed_gpu_ops"],
        json!({"kernel": 1, "gpu_memory": 1})
    );
    assert_eq!(
        (
            stats.untimed_gpu_ops.kernel,
            stats.untimed_gpu_ops.get("gpu_memory")
        ),
        (1, 1)
    );
    let names: Vec<&str> = events(&trace)
        .iter()
        .filter(|e| is_gpu_op(e))
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["timed", "running"]);
    let running = events(&trace)
        .iter()
        .find(|e| e["name"] == "running")
        .unwrap();
    assert_eq!(running["dur"], json!(0.0), "{running}");
    assert!(running["ts"].as_f64().unwrap() > 0.0);
    // No stream track for stream 9, which held only the untimed kernel.
    assert!(!events(&trace)
        .iter()
        .any(|e| e["ph"] == "M" && e["args"]["name"] == "stream 9 "));
    let memory: Vec<&Value> = events(&trace)
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .collect();
    assert_eq!(memory.len(), 1);
    assert_eq!(memory[0]["args"]["Total Reserved"], json!(1_048_576 + 4096));
    // PyTorch's merge has none of this: the kernel is drawn at 0.
    let exact = dir.path().join("e.json");
    let options = ExportOptions {
        exact: true,
        ..ExportOptions::default()
    };
    export_window(&window, &exact, &options).expect("export");
    let exact = read_json(&exact);
    assert!(events(&exact)
        .iter()
        .any(|e| e["name"] == "untimed" && e["ts"] == json!(0.0)));
}

/// The merge reads the kinds PyTorch's merge does not know through the window
/// model's serde form (so a new kind needs no code in the merge): every field a
/// hand-made window gives comes across, those it leaves out default, and an event
/// without its time is what PyTorch's merge makes of an unknown kind (nothing drawn).
#[test]
fn memory_pool_events_read_through_the_window_model_keep_their_values() {
    const POOLS: &str = r#"{"events": [
 {"kind":"gpu_memory_pool","device_id":0,"timestamp_ns":1790000000000001000,"operation":1,"address":65536,"size":2097152,"release_threshold":4096,"utilized_size":1024,"min_bytes_to_keep":512,"pool_type":1,"is_managed_pool":true,"name":"[memory pool] created"},
 {"kind":"gpu_memory_pool","device_id":0,"timestamp_ns":1790000000000002000,"operation":3,"address":65536,"name":"[memory pool] trimmed"},
 {"kind":"gpu_memory_pool","device_id":0,"operation":2,"address":65536,"name":"no time"},
 {"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"correlation_id":1,"start_ns":1790000000000000000,"end_ns":1790000000000003000,"name":"k"}
]}"#;
    let window = MergeWindow::from_json(POOLS.as_bytes(), "pools").expect("window");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.json");
    export_window(&window, &path, &ExportOptions::default()).expect("export");
    let trace = read_json(&path);
    let pools: Vec<&Value> = events(&trace)
        .iter()
        .filter(|e| e["cat"] == "gpu_memory_pool")
        .collect();
    assert_eq!(pools.len(), 2, "{pools:?}");
    assert_eq!(pools[0]["name"], "[memory pool] created");
    assert_eq!(
        pools[0]["args"],
        json!({"Pool Addr": 65536, "Pool Size": 2097152, "Utilized Size": 1024,
               "Release Threshold": 4096, "Min Bytes To Keep": 512, "Pool Type": 1,
               "Managed": 1})
    );
    assert_eq!(pools[1]["name"], "[memory pool] trimmed");
    assert_eq!(
        pools[1]["args"],
        json!({"Pool Addr": 65536, "Pool Size": 0, "Utilized Size": 0,
               "Release Threshold": 0, "Min Bytes To Keep": 0, "Pool Type": 0,
               "Managed": 0})
    );
    assert!(!events(&trace).iter().any(|e| e["name"] == "no time"));
}
