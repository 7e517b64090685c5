//! The merged torch_mlp trace holds to what Perfetto needs to load it
//! cleanly: numeric ts/dur on every complete event, a finish for every flow
//! start (and the reverse), and properly nested slices on each thread.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use cupmon_trace::{merge_files, MergeOptions, MergeWindow, WindowSource};
use serde_json::Value;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/h200-cupti13.0/torch_mlp")
}

/// Correlation ids of the window's GPU ops without a start time (CUPTI's 0), read
/// from the window file itself: the complete trace leaves those ops out.
fn untimed_correlations() -> HashMap<i64, usize> {
    let text = std::fs::read(fixture().join("expected_window.json")).expect("read");
    let window: Value = serde_json::from_slice(&text).expect("json");
    let mut ids = HashMap::new();
    for e in window["events"].as_array().expect("events") {
        let gpu =
            ["kernel", "gpu_memcpy", "gpu_memset"].contains(&e["kind"].as_str().unwrap_or(""));
        if gpu && e["start_ns"].as_i64() == Some(0) {
            *ids.entry(e["correlation_id"].as_i64().expect("id"))
                .or_default() += 1;
        }
    }
    ids
}

fn merged() -> Value {
    let dir = fixture();
    let window = MergeWindow::read(&dir.join("expected_window.json")).expect("window");
    let out = tempfile::tempdir().expect("tempdir");
    let path = out.path().join("merged.json");
    merge_files(
        &dir.join("kineto_cpu_trace.json"),
        WindowSource::Loaded(&window),
        &path,
        &MergeOptions::default(),
        &mut |_| {},
    )
    .expect("merge");
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json")
}

#[test]
fn complete_events_have_numeric_ts_and_dur() {
    let trace = merged();
    let events = trace["traceEvents"].as_array().expect("events");
    let bad: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "X" && !(e["ts"].is_number() && e["dur"].is_number()))
        .collect();
    assert!(
        bad.is_empty(),
        "{} complete events without numeric ts/dur: {:?}",
        bad.len(),
        &bad[..bad.len().min(3)]
    );
}

/// Every flow finish has its start; every start has its finish except where
/// PyTorch's merge draws one from a synchronisation call (`cudaStreamSynchronize`,
/// `cudaDeviceSynchronize`, `cudaStreamWaitEvent` are in its flow list but
/// launch no GPU work). That is PyTorch's merge's behaviour, kept on purpose. A launch
/// whose GPU op has no time keeps its start too: the op is left out of the
/// complete trace, the launch is not (viewers ignore a start without a finish).
#[test]
fn every_flow_start_has_its_finish() {
    let trace = merged();
    let untimed = untimed_correlations();
    assert_eq!(
        untimed.values().sum::<usize>(),
        48,
        "torch_mlp's untimed GPU ops"
    );
    let mut flows: HashMap<(String, i64), (usize, usize)> = HashMap::new();
    let mut sync_calls: HashMap<i64, String> = HashMap::new();
    for e in trace["traceEvents"].as_array().expect("events") {
        if e["cat"] == "cuda_runtime" {
            let name = e["name"].as_str().unwrap_or("");
            if name.contains("Synchronize") || name == "cudaStreamWaitEvent" {
                sync_calls.insert(
                    e["args"]["correlation"].as_i64().unwrap_or(-1),
                    name.to_owned(),
                );
            }
        }
        let (Some(ph), Some(id)) = (e["ph"].as_str(), e["id"].as_i64()) else {
            continue;
        };
        let key = (e["cat"].as_str().unwrap_or("").to_owned(), id);
        match ph {
            "s" => flows.entry(key).or_default().0 += 1,
            "f" => flows.entry(key).or_default().1 += 1,
            _ => {}
        }
    }
    let unmatched: Vec<_> = flows
        .iter()
        .filter(|(_, (s, f))| *s == 0 || *f == 0)
        .filter(|((cat, id), (_, f))| !(cat == "ac2g" && *f == 0 && sync_calls.contains_key(id)))
        .filter(|((cat, id), (s, f))| {
            !(cat == "ac2g" && *s == 1 && *f == 0 && untimed.contains_key(id))
        })
        .collect();
    assert!(
        unmatched.is_empty(),
        "{} flows without both ends, e.g. {:?}",
        unmatched.len(),
        &unmatched[..unmatched.len().min(5)]
    );
    let from_sync = flows
        .iter()
        .filter(|((_, id), (_, f))| *f == 0 && sync_calls.contains_key(id))
        .count();
    let from_untimed = flows
        .iter()
        .filter(|((_, id), (_, f))| *f == 0 && untimed.contains_key(id))
        .count();
    assert_eq!(
        from_untimed,
        untimed.len(),
        "each untimed op's launch keeps its start"
    );
    eprintln!(
        "{from_sync} ac2g starts from synchronisation calls have no finish (PyTorch's merge's behaviour), \
         {from_untimed} from launches of GPU ops without a time (left out)"
    );
}

/// Slices on one thread must nest: each starts after the enclosing one ends
/// or ends within it (times compared in ns to avoid float noise).
#[test]
fn slices_nest_on_every_thread() {
    let trace = merged();
    let mut by_thread: BTreeMap<String, Vec<(i64, i64, String)>> = BTreeMap::new();
    for e in trace["traceEvents"].as_array().expect("events") {
        if e["ph"] != "X" {
            continue;
        }
        let ts = (e["ts"].as_f64().expect("ts") * 1000.0).round() as i64;
        let dur = (e["dur"].as_f64().expect("dur") * 1000.0).round() as i64;
        let key = format!("{}/{}", e["pid"], e["tid"]);
        by_thread.entry(key).or_default().push((
            ts,
            ts + dur,
            e["name"].as_str().unwrap_or("").to_owned(),
        ));
    }
    let mut misnested = Vec::new();
    for (thread, slices) in &mut by_thread {
        slices.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut open: Vec<(i64, i64, String)> = Vec::new();
        for s in slices.iter() {
            while open.last().is_some_and(|o| o.1 <= s.0) {
                open.pop();
            }
            if let Some(parent) = open.last() {
                if s.1 > parent.1 {
                    misnested.push(format!("{thread}: {:?} overlaps {:?}", s, parent));
                }
            }
            open.push(s.clone());
        }
    }
    assert!(
        misnested.is_empty(),
        "{} misnested slices:\n{}",
        misnested.len(),
        misnested[..misnested.len().min(10)].join("\n")
    );
}
