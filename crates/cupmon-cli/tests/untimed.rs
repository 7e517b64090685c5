//! Regression: GPU ops with CUPTI timestamps of 0 were drawn at ts 0 (1970 in a
//! decoded trace). Every command that writes a complete trace leaves them out, says
//! so in one warning line and counts them in the trace's `cupmon` block; `--exact`
//! (PyTorch's `merge_trace_window_into_chrome_trace`) keeps them, silently.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::util::*;

/// Zero-start GPU records per trace `cat`, from the fixture's list of its raw
/// records (`truth.jsonl`, written beside the dump when it was recorded).
fn zero_start_by_cat() -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(fixture("torch_mlp/truth.jsonl")).expect("truth.jsonl");
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).expect("a JSON line");
        let cat = match r["kind"].as_u64() {
            Some(1) => "gpu_memcpy",
            Some(2) => "gpu_memset",
            Some(3 | 10) => "kernel",
            _ => continue,
        };
        if r["start"].as_u64() == Some(0) {
            *counts.entry(cat.to_owned()).or_insert(0) += 1;
        }
    }
    counts
}

/// GPU records per trace `cat`, from `cupmon stats`' lines.
fn stats_by_cat(dir: &Path) -> BTreeMap<String, u64> {
    let out = cupmon(dir, &["stats", "dump"]);
    assert_success(&out);
    let mut counts = BTreeMap::new();
    for line in stdout(&out).lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let cat = match words.as_slice() {
            ["CONCURRENT_KERNEL" | "KERNEL", _] => "kernel",
            ["MEMCPY", _] => "gpu_memcpy",
            ["MEMSET", _] => "gpu_memset",
            _ => continue,
        };
        let n: u64 = words[1].parse().expect("a count");
        *counts.entry(cat.to_owned()).or_insert(0) += n;
    }
    counts
}

fn gpu_ops_by_cat(trace: &Value) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for e in trace["traceEvents"].as_array().expect("events") {
        let cat = e["cat"].as_str().unwrap_or("");
        if e["ph"] == "X" && ["kernel", "gpu_memcpy", "gpu_memset"].contains(&cat) {
            *counts.entry(cat.to_owned()).or_insert(0) += 1;
            assert!(e["ts"].as_f64().expect("ts") > 0.0, "a GPU op at ts 0: {e}");
        }
    }
    counts
}

/// The warning lines about untimed ops in `out`'s stderr.
fn untimed_warnings(out: &std::process::Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| l.contains("GPU ops that CUPTI gave no time"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn complete_traces_leave_out_gpu_ops_without_a_time_and_say_how_many() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    copy_dump(&dir.join("dump"));
    let zero = zero_start_by_cat();
    let total: u64 = zero.values().sum();
    assert_eq!(total, 48, "torch_mlp's zero-start GPU records");
    let mut kept = stats_by_cat(dir);
    for (cat, n) in &zero {
        *kept.get_mut(cat).expect("stats counts the kind") -= n;
    }
    let window = cupmon_line(dir, "decode dump --format window -o w.json");
    assert_success(&window);
    assert!(
        untimed_warnings(&window).is_empty(),
        "a window keeps every record"
    );
    let cpu = fixture("torch_mlp/kineto_cpu_trace.json");
    let cpu = cpu.to_str().expect("utf-8 path");
    for line in [
        "decode dump --format chrome -o t.json".to_owned(),
        "export --window w.json -o t.json".to_owned(),
        format!("merge --cpu {cpu} --window w.json -o t.json"),
        format!("decode dump --cpu {cpu} -o t.json"),
    ] {
        let out = cupmon_line(dir, &line);
        assert_success(&out);
        let warnings = untimed_warnings(&out);
        assert_eq!(warnings.len(), 1, "cupmon {line}: {}", stderr(&out));
        assert!(
            warnings[0].contains(&format!("left out {total} GPU ops"))
                && warnings[0].contains("42 kernel, 4 gpu_memcpy, 2 gpu_memset"),
            "{}",
            warnings[0]
        );
        let trace = read_json(&dir.join("t.json"));
        let left_out = &trace["cupmon"]["untimed_gpu_ops"];
        for (cat, n) in &zero {
            assert_eq!(
                left_out[cat].as_u64(),
                Some(*n),
                "cupmon {line}: {left_out}"
            );
        }
        assert_eq!(gpu_ops_by_cat(&trace), kept, "cupmon {line}");
    }
    for line in [
        "decode dump --format chrome --exact -o x.json".to_owned(),
        format!("merge --exact --cpu {cpu} --window w.json -o x.json"),
    ] {
        let out = cupmon_line(dir, &line);
        assert_success(&out);
        assert!(untimed_warnings(&out).is_empty(), "cupmon {line}");
        let trace = read_json(&dir.join("x.json"));
        assert!(trace["cupmon"].get("untimed_gpu_ops").is_none(), "{line}");
    }
}
