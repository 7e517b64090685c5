//! `cupmon demo` checked by values against independent sources: torch.profiler's own
//! CPU trace of the recorded steps (the profiled span, the aten ops on each thread)
//! and `cupmon stats` of the same slice of the built-in dump.

use std::collections::HashMap;

use crate::util::{cupmon_line, fixture, stderr, stdout};
use serde_json::Value;

const GPU_CATS: [&str; 3] = ["kernel", "gpu_memcpy", "gpu_memset"];
const TAIL_US: f64 = 50_000.0;

fn cat(e: &Value) -> &str {
    e["cat"].as_str().unwrap_or("")
}

fn ts(e: &Value) -> f64 {
    e["ts"].as_f64().expect("ts")
}

fn end(e: &Value) -> f64 {
    ts(e) + e["dur"].as_f64().unwrap_or(0.0)
}

/// `[first ProfilerStep start, last ProfilerStep end]` of a Kineto trace, in its µs.
fn profiled_span(events: &[Value]) -> (f64, f64) {
    let steps: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("ProfilerStep"))
        })
        .collect();
    assert!(!steps.is_empty(), "no ProfilerStep in the trace");
    let lo = steps.iter().map(|e| ts(e)).fold(f64::MAX, f64::min);
    let hi = steps.iter().map(|e| end(e)).fold(f64::MIN, f64::max);
    (lo, hi)
}

fn count_in_stats(stats: &str, kind: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(kind)).then(|| w.next().and_then(|n| n.parse().ok()))
        })
        .flatten()
        .unwrap_or_else(|| panic!("no {kind} line in:\n{stats}"))
}

#[test]
fn the_demo_trace_lines_up_with_torch_profilers_own_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = cupmon_line(dir.path(), "demo -o demo.json");
    assert!(out.status.success(), "{}", stderr(&out));
    let trace: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("demo.json")).expect("read"))
            .expect("json");
    let events = trace["traceEvents"].as_array().expect("traceEvents");

    // The independent source: torch.profiler's trace as it wrote it.
    let kineto: Value = serde_json::from_slice(
        &std::fs::read(fixture("torch_transformer/kineto_cpu_trace.json")).expect("read"),
    )
    .expect("json");
    let (lo, hi) = profiled_span(kineto["traceEvents"].as_array().expect("events"));
    assert_eq!(trace["baseTimeNanoseconds"], kineto["baseTimeNanoseconds"]);

    // Every GPU op on CUPTI's clock converted, inside the profiled span.
    let gpu: Vec<&Value> = events
        .iter()
        .filter(|e| GPU_CATS.contains(&cat(e)))
        .collect();
    assert!(gpu.len() > 100, "{} GPU ops", gpu.len());
    let outside: Vec<f64> = gpu
        .iter()
        .map(|e| ts(e))
        .filter(|&t| t < lo || t > hi + TAIL_US)
        .collect();
    assert!(
        outside.is_empty(),
        "{} GPU ops outside {lo}..{hi}: {outside:?}",
        outside.len()
    );

    // Every GPU op starts after the runtime call that launched it (the start of its
    // ac2g arrow, keyed by correlation id; a graph launch's kernels share one).
    let launches: HashMap<u64, f64> = events
        .iter()
        .filter(|e| cat(e) == "ac2g" && e["ph"] == "s")
        .map(|e| (e["id"].as_u64().expect("id"), ts(e)))
        .collect();
    let mut unlinked = 0;
    for op in &gpu {
        match launches.get(&op["args"]["correlation"].as_u64().expect("correlation")) {
            Some(&launch) => assert!(launch <= ts(op), "{op} starts before its launch"),
            None => unlinked += 1,
        }
    }
    assert_eq!(unlinked, 0, "GPU ops without a launch arrow");

    // The launching calls happen inside torch's own ops on their thread.
    let mut ops: HashMap<u64, Vec<(f64, f64)>> = HashMap::new();
    for e in events.iter().filter(|e| cat(e) == "cpu_op") {
        ops.entry(e["tid"].as_u64().unwrap_or(0))
            .or_default()
            .push((ts(e), end(e)));
    }
    let runtime: Vec<&Value> = events.iter().filter(|e| cat(e) == "cuda_runtime").collect();
    let inside = runtime
        .iter()
        .filter(|r| {
            let tid = r["tid"].as_u64().unwrap_or(0);
            ops.get(&tid)
                .is_some_and(|v| v.iter().any(|&(a, b)| a <= ts(r) && end(r) <= b))
        })
        .count();
    assert!(
        inside * 100 >= runtime.len() * 90,
        "{inside} of {} runtime calls inside an aten op",
        runtime.len()
    );

    // Readable kernel names, and the counts of `cupmon stats` on the same slice.
    assert!(gpu
        .iter()
        .all(|e| !e["name"].as_str().unwrap_or("_Z").starts_with("_Z")));
    let base = kineto["baseTimeNanoseconds"].as_u64().expect("base");
    let at = |us: f64| {
        let ns = base + (us * 1e3) as u64;
        format!("@{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
    };
    let first_op = kineto["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(ts)
        .fold(f64::MAX, f64::min);
    let last_end = kineto["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(end)
        .fold(f64::MIN, f64::max);
    let dump = fixture("torch_transformer/dump");
    let line = format!(
        "stats {} --from {} --to {}",
        dump.display(),
        at(first_op),
        at(last_end + TAIL_US)
    );
    let stats = cupmon_line(dir.path(), &line);
    assert!(stats.status.success(), "{}", stderr(&stats));
    let stats = stdout(&stats);
    for (kind, category) in [
        ("CONCURRENT_KERNEL", "kernel"),
        ("MEMCPY", "gpu_memcpy"),
        ("MEMSET", "gpu_memset"),
    ] {
        let in_trace = gpu.iter().filter(|e| cat(e) == category).count() as u64;
        assert_eq!(count_in_stats(&stats, kind), in_trace, "{kind}");
    }
}
