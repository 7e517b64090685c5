//! Perfetto protobuf outputs: which name or option gives one (`.pftrace`,
//! `.pftrace.gz`, the format option), and that it holds what the Chrome JSON
//! trace of the same input holds: slices (names, ns times), threads, flows,
//! instants, counters, overlap tracks. Decoded against Perfetto's vendored
//! protos by cupmon-pftrace's test reader, not by the writer's code.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use super::common::fixture_dir;
use cupmon_trace::{
    combine_traces_as, export_window, merge_files, ExportOptions, MergeOptions, MergeWindow,
    TraceFormat, WindowSource,
};
use serde_json::Value;

#[path = "../../cupmon-pftrace/tests/common/mod.rs"]
pub(super) mod pf;

fn read(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).expect("read");
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .expect("gunzip");
        return out;
    }
    bytes
}

fn model(path: &Path) -> pf::Model {
    pf::model(&pf::decode(&read(path)))
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&read(path)).expect("a JSON trace")
}

fn window(text: &str) -> MergeWindow {
    MergeWindow::from_json(text.as_bytes(), "test window").expect("window")
}

fn fixture_window(name: &str) -> MergeWindow {
    MergeWindow::read(&fixture_dir(name).join("expected_window.json")).expect("window")
}

fn export(w: &MergeWindow, out: &Path, exact: bool, format: Option<TraceFormat>) {
    let options = ExportOptions {
        trace_name: Some("t".into()),
        exact,
        format,
        ..ExportOptions::default()
    };
    export_window(w, out, &options).expect("export");
}

/// `round(µs * 1000)` after the base, as the converter reads JSON times.
fn ns(base: i128, us: &Value) -> u64 {
    (base + (us.as_f64().expect("a time") * 1000.0).round() as i128) as u64
}

/// The JSON trace's slices as (thread name, name, start ns, end ns), in
/// file order with each one's event index and (pid, tid); thread names by
/// (pid, tid), the last `thread_name` winning.
fn json_slices_in_order(t: &Value) -> Vec<(usize, (String, String), Slice)> {
    let base = t["baseTimeNanoseconds"].as_i64().map_or(0, i128::from);
    let events = t["traceEvents"].as_array().expect("events");
    let mut names = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
    {
        names.insert(
            (e["pid"].to_string(), e["tid"].to_string()),
            e["args"]["name"].as_str().unwrap_or("").to_owned(),
        );
    }
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| e["ph"] == "X")
        .map(|(i, e)| {
            let key = (e["pid"].to_string(), e["tid"].to_string());
            let thread = names.get(&key).cloned().unwrap_or_else(|| match &e["tid"] {
                Value::String(s) => s.clone(),
                _ => String::new(),
            });
            let start = ns(base, &e["ts"]);
            let end = start + (e["dur"].as_f64().expect("dur") * 1000.0).round() as u64;
            let name = e["name"].as_str().unwrap_or("").to_owned();
            (i, key, (thread, name, start, end))
        })
        .collect()
}

/// (thread name, name, start ns, end ns)
type Slice = (String, String, u64, u64);

fn json_slices(t: &Value) -> Vec<Slice> {
    let mut out: Vec<_> = json_slices_in_order(t)
        .into_iter()
        .map(|(_, _, s)| s)
        .collect();
    out.sort();
    out
}

/// The JSON trace's flow ends as the slice each binds to and whether it ends
/// there: a flow event binds to the innermost slice of its thread open at
/// its time among those before it in the file (the latest start, then the
/// shorter, then the later one); an `f` without `"bp": "e"` to the next
/// slice starting at or after it. The rule of Perfetto's JSON import, as
/// tests/python/pftrace_compare.py has it.
fn json_flow_ends(t: &Value) -> Vec<(Slice, bool)> {
    let base = t["baseTimeNanoseconds"].as_i64().map_or(0, i128::from);
    let slices = json_slices_in_order(t);
    let mut out = Vec::new();
    for (i, e) in t["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .enumerate()
    {
        let ph = e["ph"].as_str().unwrap_or("");
        if !matches!(ph, "s" | "t" | "f") || e.get("id").is_none() {
            continue;
        }
        let key = (e["pid"].to_string(), e["tid"].to_string());
        let ts = ns(base, &e["ts"]);
        let on_thread = slices.iter().filter(|(_, k, _)| *k == key);
        let bound = if ph == "f" && e["bp"] != "e" {
            on_thread
                .filter(|(_, _, s)| s.2 >= ts)
                .min_by_key(|(j, _, s)| (s.2, *j))
        } else {
            on_thread
                .filter(|(j, _, s)| s.2 <= ts && ts <= s.3 && (s.2, *j) < (ts, i))
                .max_by_key(|(j, _, s)| (s.2, std::cmp::Reverse(s.3), *j))
        };
        if let Some((_, _, s)) = bound {
            out.push((s.clone(), ph == "f"));
        }
    }
    out.sort();
    out
}

/// The same from the Perfetto trace.
fn pf_flow_ends(m: &pf::Model) -> Vec<(Slice, bool)> {
    let mut out = Vec::new();
    for s in pf::paired_slices(m) {
        let thread = m.tracks[&s.track].thread_name.clone().unwrap_or_default();
        let slice = (thread, s.name, s.start, s.end);
        out.extend(s.flows.iter().map(|_| (slice.clone(), false)));
        out.extend(s.terminating_flows.iter().map(|_| (slice.clone(), true)));
    }
    out.sort();
    out
}

/// The same from the Perfetto trace: a slice on an overlap track that the
/// writer opened counts on its thread (`lanes` says how many did).
fn pf_slices(m: &pf::Model) -> (Vec<Slice>, usize) {
    let mut lanes = 0;
    let thread_of = |uuid: u64, lanes: &mut usize| -> String {
        let t = &m.tracks[&uuid];
        if let Some(name) = &t.thread_name {
            return name.clone();
        }
        match t.parent.and_then(|p| m.tracks.get(&p)) {
            Some(parent) if t.tid.is_none() && parent.tid.is_some() => {
                *lanes += 1;
                parent.thread_name.clone().unwrap_or_default()
            }
            _ => t.name.clone().unwrap_or_default(),
        }
    };
    let mut out: Vec<_> = pf::paired_slices(m)
        .into_iter()
        .map(|s| (thread_of(s.track, &mut lanes), s.name, s.start, s.end))
        .collect();
    out.sort();
    (out, lanes)
}

fn count(t: &Value, ph: &str) -> usize {
    t["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == ph)
        .count()
}

#[test]
fn a_merge_to_pftrace_holds_the_slices_threads_and_flows_of_the_json_merge() {
    let dir = fixture_dir("torch_mlp");
    let out = tempfile::tempdir().expect("tempdir");
    let window = fixture_window("torch_mlp");
    let mut stats = Vec::new();
    for name in ["m.json", "m.pftrace"] {
        let s = merge_files(
            &dir.join("kineto_cpu_trace.json"),
            WindowSource::Loaded(&window),
            &out.path().join(name),
            &MergeOptions {
                trace_name: Some("torch_mlp".into()),
                ..MergeOptions::default()
            },
            &mut |_| {},
        )
        .expect("merge");
        stats.push(s);
    }
    let t = json(&out.path().join("m.json"));
    let m = model(&out.path().join("m.pftrace"));
    let (slices, lanes) = pf_slices(&m);
    assert_eq!(json_slices(&t), slices, "the same slices at the same ns");
    assert_eq!(
        lanes, 0,
        "cupmon's JSON needs no overlap track of the writer"
    );
    let p = stats[1].pftrace.as_ref().expect("pftrace stats");
    assert_eq!(stats[0].pftrace, None);
    assert_eq!(p.slices as usize, count(&t, "X"));
    // Every arrow end (ac2g launch -> kernel, Kineto's fwdbwd) is on a slice.
    let flow_events = count(&t, "s") + count(&t, "f");
    assert_eq!(p.flow_events_bound as usize, flow_events);
    assert_eq!(p.flow_events_unbound, 0);
    let ends: usize = m
        .events
        .iter()
        .map(|e| e.flows.len() + e.terminating_flows.len())
        .sum();
    assert_eq!(ends, flow_events);
    // On the slices the JSON's arrows bind to (the fixture's kernels all
    // start at 0: each arrow goes to the innermost one open then, not
    // always to the kernel it follows).
    assert_eq!(json_flow_ends(&t), pf_flow_ends(&m));
    assert!(p.warnings().is_empty(), "{:?}", p.warnings());
    // The CPU side came from torch.profiler's JSON: its names are there.
    assert!(slices.iter().any(|s| s.1 == "aten::addmm"));
    assert!(slices.iter().any(|s| s.0 == "thread 466 (python3)"));
    // The top-level members, as metadata.
    let meta: BTreeMap<_, _> = m.metadata.iter().cloned().collect();
    assert_eq!(meta["traceName"], pf::A::Str("torch_mlp".into()));
    assert!(meta.contains_key("deviceProperties"));
    assert_eq!(m.bundles, 1);
}

#[test]
fn the_name_or_the_format_option_picks_the_format() {
    let w = fixture_window("cuda_workload");
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, Option<TraceFormat>, bool); 5] = [
        ("a.pftrace", None, true),
        ("b.pftrace.gz", None, true),
        ("c.bin", Some(TraceFormat::Pftrace), true),
        ("d.pftrace", Some(TraceFormat::Json), false),
        ("e.json.gz", None, false),
    ];
    for (name, format, pftrace) in cases {
        let path = dir.path().join(name);
        export(&w, &path, false, format);
        let raw = std::fs::read(&path).expect("read");
        assert_eq!(
            raw.starts_with(&[0x1f, 0x8b]),
            name.ends_with(".gz"),
            "{name}"
        );
        let bytes = read(&path);
        if pftrace {
            // Trace.packet (field 1, length-delimited), then a Trace that decodes.
            assert_eq!(bytes[0], 0x0a, "{name}");
            let m = pf::model(&pf::decode(&bytes));
            assert!(m.events.len() > 100, "{name}");
        } else {
            assert_eq!(bytes[0], b'{', "{name}");
        }
    }
}

#[test]
fn kernel_times_are_the_windows_ns_not_rounded_microseconds() {
    let w = fixture_window("cuda_workload");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.pftrace");
    export(&w, &path, false, None);
    let slices = pf::paired_slices(&model(&path));
    let text = std::fs::read(fixture_dir("cuda_workload").join("expected_window.json")).unwrap();
    let window: Value = serde_json::from_slice(&text).unwrap();
    let kernels: Vec<_> = window["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "kernel")
        .collect();
    assert!(!kernels.is_empty());
    for k in kernels {
        let (start, end) = (
            k["start_ns"].as_u64().unwrap(),
            k["end_ns"].as_u64().unwrap(),
        );
        assert!(
            slices.iter().any(|s| s.start == start && s.end == end),
            "kernel at {start}..{end} ns"
        );
    }
}

/// Three kernels on stream 7: the second overlaps the first without nesting
/// in it, the third follows; each launched from one thread.
const OVERLAPPING: &str = r#"{"events": [
 {"kind":"cuda_runtime","cbid":211,"process_id":10,"thread_id":11,"correlation_id":1,"start_ns":1790000000000000000,"end_ns":1790000000000000500},
 {"kind":"cuda_runtime","cbid":211,"process_id":10,"thread_id":11,"correlation_id":2,"start_ns":1790000000000001000,"end_ns":1790000000000001500},
 {"kind":"cuda_runtime","cbid":211,"process_id":10,"thread_id":11,"correlation_id":3,"start_ns":1790000000000002000,"end_ns":1790000000000002500},
 {"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"correlation_id":1,"start_ns":1790000000000010000,"end_ns":1790000000000020000,"name":"first"},
 {"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"correlation_id":2,"start_ns":1790000000000015000,"end_ns":1790000000000025000,"name":"second"},
 {"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"correlation_id":3,"start_ns":1790000000000030000,"end_ns":1790000000000031000,"name":"third"}
], "user_annotations": {}, "thread_resource_map": {}, "start_ns": 0}"#;

#[test]
fn overlapping_ops_on_one_stream_stay_on_their_own_tracks() {
    let w = window(OVERLAPPING);
    let dir = tempfile::tempdir().expect("tempdir");
    for exact in [false, true] {
        let (j, p) = (dir.path().join("o.json"), dir.path().join("o.pftrace"));
        export(&w, &j, exact, None);
        export(&w, &p, exact, None);
        let m = model(&p);
        let (slices, lanes) = pf_slices(&m);
        let kernels: Vec<_> = pf::paired_slices(&m)
            .into_iter()
            .filter(|s| ["first", "second", "third"].contains(&s.name.as_str()))
            .collect();
        assert_eq!(kernels.len(), 3, "exact {exact}: none dropped");
        let track_name = |uuid: u64| {
            let t = &m.tracks[&uuid];
            t.thread_name.clone().or(t.name.clone()).unwrap_or_default()
        };
        let second = kernels.iter().find(|s| s.name == "second").unwrap();
        let first = kernels.iter().find(|s| s.name == "first").unwrap();
        assert_ne!(second.track, first.track, "exact {exact}");
        assert_eq!(
            track_name(second.track),
            "stream 7 (overlap)",
            "exact {exact}"
        );
        assert_eq!(track_name(first.track), "stream 7 ", "exact {exact}");
        // The complete trace has the overlap track in its JSON already; PyTorch's
        // exact output has both on one thread, and the writer opens the track.
        assert_eq!(lanes, usize::from(exact), "exact {exact}");
        if !exact {
            assert_eq!(json_slices(&json(&j)), slices);
        }
        // Each kernel still has its launch's arrow.
        assert_eq!(
            kernels
                .iter()
                .map(|k| k.terminating_flows.len())
                .sum::<usize>(),
            3
        );
    }
}

/// Memory events: a `[memory]` instant per operation and a counter of the
/// bytes held, as the complete trace's JSON has them.
const MEMORY: &str = r#"{"events": [
 {"kind":"kernel","device_id":0,"stream_id":7,"context_id":1,"correlation_id":1,"start_ns":1790000000000010000,"end_ns":1790000000000020000,"name":"k"},
 {"kind":"gpu_memory","device_id":0,"stream_id":7,"timestamp_ns":1790000000000001000,"operation":1,"address":4096,"bytes":1048576,"memory_kind":3,"name":"[memory]"},
 {"kind":"gpu_memory","device_id":0,"stream_id":7,"timestamp_ns":1790000000000030000,"operation":2,"address":4096,"bytes":0,"memory_kind":3,"name":"[memory]"}
], "user_annotations": {}, "thread_resource_map": {}, "start_ns": 0}"#;

#[test]
fn memory_counters_and_instants_come_across() {
    let w = window(MEMORY);
    let dir = tempfile::tempdir().expect("tempdir");
    let (j, p) = (dir.path().join("m.json"), dir.path().join("m.pftrace"));
    export(&w, &j, false, None);
    export(&w, &p, false, None);
    let t = json(&j);
    assert_eq!(count(&t, "C"), 2);
    let m = model(&p);
    let counter = m
        .tracks
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("GPU memory (driver allocations) bytes"))
        .map(|(uuid, _)| *uuid)
        .expect("the counter track, named as Perfetto names the JSON's series");
    let values: Vec<(u64, f64)> = m
        .events
        .iter()
        .filter(|e| e.track == counter)
        .map(|e| (e.ts, e.counter.as_ref().unwrap().as_f64().unwrap()))
        .collect();
    assert_eq!(
        values,
        vec![
            (1_790_000_000_000_001_000, 1_048_576.0),
            (1_790_000_000_000_030_000, 0.0)
        ]
    );
    let instants = m
        .events
        .iter()
        .filter(|e| e.ty == 3 && e.name.as_deref() == Some("[memory]"));
    let args: Vec<_> = instants.map(|e| e.args.clone()).collect();
    assert_eq!(args.len(), 2);
    assert!(
        args[0].contains(&("Bytes".into(), pf::A::Int(1_048_576))),
        "{args:?}"
    );
}

#[test]
fn a_combine_to_pftrace_holds_every_rank() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs: Vec<_> = ["cuda_workload", "torch_mlp"]
        .iter()
        .map(|f| {
            let path = dir.path().join(format!("{f}.trace.json"));
            export(&fixture_window(f), &path, false, None);
            path
        })
        .collect();
    let (j, p) = (dir.path().join("c.json"), dir.path().join("c.pftrace.gz"));
    combine_traces_as(&inputs, &j, &[], None).expect("combine");
    let stats = combine_traces_as(&inputs, &p, &[], None).expect("combine");
    assert!(stats.pftrace.is_some());
    let (slices, _) = pf_slices(&model(&p));
    assert_eq!(json_slices(&json(&j)), slices);
    let err = combine_traces_as(std::slice::from_ref(&p), &j, &[], Some(TraceFormat::Json))
        .expect_err("a .pftrace input")
        .to_string();
    assert!(err.contains("combine reads Chrome JSON traces"), "{err}");
}
