//! Records on a clock cupmon cannot convert (issue 28): a dump of a process that ran
//! torch.profiler, cut after its first buffer, holds one sample of the profiler's clock,
//! too few to convert its records. They used to be left out of every output (counted
//! only); the rule now (`cupmon_records::clock::OFF_CLOCK_RULE`) keeps them, flagged,
//! on their own clock, apart from the records on the session's clock, in every output.

use std::path::Path;

use cupmon_records::clock::{OFF_CLOCK_NAME, OFF_CLOCK_TRACK, UNIX_NS_FLOOR};
use serde_json::Value;

use crate::util::{copy_dump, cupmon, stderr, stdout};

/// The torch_mlp fixture (a real H200 recording under torch.profiler) cut after its
/// first chunk, as a kill leaves it: 117 of its records are on the profiler's clock.
fn truncated_torch_profiler_dump(dir: &Path) {
    copy_dump(dir);
    let raw = dir.join("cupti_monitor_raw_buffers.bin");
    let bytes = std::fs::read(&raw).unwrap();
    let first_chunk = 48 + u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize;
    std::fs::write(&raw, &bytes[..first_chunk]).unwrap();
}

const OFF_CLOCK: u64 = 117;
/// The records on the session's clock (Unix ns) in that chunk.
const ON_CLOCK: u64 = 530;

#[test]
fn off_clock_records_of_a_truncated_torch_profiler_dump_are_kept_apart_not_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("dump");
    truncated_torch_profiler_dump(&dump);
    let d = dump.to_str().unwrap();

    // stats: counted apart, and says so.
    let stats = cupmon(tmp.path(), &["stats", d]);
    assert_eq!(stats.status.code(), Some(0), "{}", stderr(&stats));
    let text = stdout(&stats);
    assert!(
        text.contains(&format!("records:         {ON_CLOCK}\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!("other clock:     {OFF_CLOCK} records"))
            && text.contains("counted apart"),
        "{text}"
    );
    assert!(stderr(&stats).contains("kept apart on their own clock"));

    // The window: the others in `events`, all on Unix ns; these in `off_clock`, raw.
    let decode = cupmon(tmp.path(), &["decode", d, "-o", "window.json"]);
    assert_eq!(decode.status.code(), Some(0), "{}", stderr(&decode));
    let w = json(&tmp.path().join("window.json"));
    let events = w["events"].as_array().unwrap();
    assert_eq!(events.len() as u64, ON_CLOCK);
    assert!(events.iter().all(|e| on_unix_clock(e, "start_ns")));
    assert_eq!(w["cupmon"]["off_clock_records"], OFF_CLOCK);
    assert_eq!(w["off_clock"]["clock"], OFF_CLOCK_NAME);
    assert_eq!(w["off_clock"]["track"], OFF_CLOCK_TRACK);
    let off = w["off_clock"]["events"].as_array().unwrap();
    assert_eq!(off.len() as u64, OFF_CLOCK);
    assert!(off.iter().any(|e| e["kind"] == "kernel"));
    assert!(off.iter().all(|e| !on_unix_clock(e, "start_ns")));

    // The trace: a process of their own, each flagged with its clock and raw times,
    // drawn within the others' time (not at their raw value, decades away).
    let trace = cupmon(tmp.path(), &["decode", d, "-o", "t.trace.json"]);
    assert_eq!(trace.status.code(), Some(0), "{}", stderr(&trace));
    let t = json(&tmp.path().join("t.trace.json"));
    let all = t["traceEvents"].as_array().unwrap();
    let (apart, rest): (Vec<&Value>, Vec<&Value>) =
        all.iter().partition(|e| e["pid"] == OFF_CLOCK_TRACK);
    let slices: Vec<&&Value> = apart.iter().filter(|e| e["ph"] == "X").collect();
    assert!(!slices.is_empty());
    for e in &slices {
        assert_eq!(e["args"]["clock"], OFF_CLOCK_NAME, "{e}");
        assert!(e["args"]["raw start"].as_u64().unwrap() < UNIX_NS_FLOOR);
    }
    // Their raw times are the window's, one slice per timed record (external
    // correlations have no time of their own), each kind on its own thread.
    let mut from_window: Vec<(String, u64, u64)> = off
        .iter()
        .filter(|e| e["kind"] != "external_correlation")
        .filter_map(|e| {
            let start = e["start_ns"].as_u64().filter(|&t| t > 0)?;
            let end = e["end_ns"].as_u64().unwrap_or(start).max(start);
            Some((e["kind"].as_str().unwrap().to_owned(), start, end))
        })
        .collect();
    let mut in_trace: Vec<(String, u64, u64)> = slices
        .iter()
        .map(|e| {
            let (start, end) = (&e["args"]["raw start"], &e["args"]["raw end"]);
            assert_eq!(e["tid"], e["cat"], "{e}");
            (
                e["cat"].as_str().unwrap().to_owned(),
                start.as_u64().unwrap(),
                end.as_u64().unwrap(),
            )
        })
        .collect();
    from_window.sort_unstable();
    in_trace.sort_unstable();
    assert_eq!(in_trace, from_window);
    // Drawn at their raw distances from the first of them (µs), for as long as they ran.
    let origin = in_trace.iter().map(|t| t.1).min().unwrap();
    let first_ts = slices
        .iter()
        .map(|e| e["ts"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    for e in &slices {
        let start = e["args"]["raw start"].as_u64().unwrap();
        let end = e["args"]["raw end"].as_u64().unwrap();
        let at = e["ts"].as_f64().unwrap() - first_ts;
        // ts is absolute Unix µs: an f64 holds it to a fraction of a µs.
        assert!((at - (start - origin) as f64 / 1000.0).abs() < 1.0, "{e}");
        let dur = e["dur"].as_f64().unwrap();
        assert!((dur - (end - start) as f64 / 1000.0).abs() < 1e-3, "{e}");
    }
    assert!(apart
        .iter()
        .any(|e| e["ph"] == "M" && e["args"]["name"] == OFF_CLOCK_TRACK));
    let ts = |v: &[&Value]| -> (f64, f64) {
        v.iter()
            .filter(|e| e["ph"] == "X" && e["cat"] != "Trace")
            .filter_map(|e| e["ts"].as_f64())
            .fold((f64::MAX, f64::MIN), |(a, b), t| (a.min(t), b.max(t)))
    };
    let (others, theirs) = (ts(&rest), ts(&apart));
    assert!(
        theirs.0 >= others.0 && theirs.1 - theirs.0 < 1e6,
        "{theirs:?} vs {others:?}"
    );
    assert_eq!(t["cupmon"]["off_clock_records"], OFF_CLOCK);
    // The same in Perfetto's format: the JSON is converted, their process with it.
    let pf = cupmon(tmp.path(), &["decode", d, "-o", "t.pftrace"]);
    assert_eq!(pf.status.code(), Some(0), "{}", stderr(&pf));
    let pf_bytes = std::fs::read(tmp.path().join("t.pftrace")).unwrap();
    assert!(contains(&pf_bytes, OFF_CLOCK_TRACK.as_bytes()));
    // The window file made into a trace later (`cupmon export`): the same process.
    let export = cupmon(
        tmp.path(),
        &["export", "--window", "window.json", "-o", "w.trace.json"],
    );
    assert_eq!(export.status.code(), Some(0), "{}", stderr(&export));
    let w_trace = json(&tmp.path().join("w.trace.json"));
    let apart_later = w_trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["pid"] == OFF_CLOCK_TRACK && e["ph"] == "X")
        .count();
    assert_eq!(apart_later, slices.len());
    // PyTorch's merge exactly: it knows nothing of them.
    let exact = cupmon(tmp.path(), &["decode", d, "--exact", "-o", "e.trace.json"]);
    assert_eq!(exact.status.code(), Some(0), "{}", stderr(&exact));
    let e = std::fs::read(tmp.path().join("e.trace.json")).unwrap();
    assert!(!contains(&e, OFF_CLOCK_TRACK.as_bytes()));

    // Parquet: rows of their own, with the clock named, never at the Unix epoch.
    let pq = cupmon(tmp.path(), &["export-parquet", d, "-o", "pq"]);
    assert_eq!(pq.status.code(), Some(0), "{}", stderr(&pq));
    let summary = stdout(&pq) + &stderr(&pq);
    let line = summary
        .lines()
        .find(|l| l.trim_start().starts_with("off_clock "))
        .unwrap_or_else(|| panic!("{summary}"));
    let rows: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    // All of them: the window's 30 kernels, 60 runtime and 27 driver calls.
    assert_eq!(rows, OFF_CLOCK, "{line}");
    let days: Vec<String> = walk(&tmp.path().join("pq"))
        .into_iter()
        .filter(|p| p.contains("day=1970"))
        .collect();
    assert!(days.is_empty(), "{days:?}");
    assert!(walk(&tmp.path().join("pq/off_clock")).len() == 1);

    // The report says how many.
    let report = cupmon(tmp.path(), &["report", d, "-o", "r.html"]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let html = std::fs::read_to_string(tmp.path().join("r.html")).unwrap();
    assert!(html.contains(&format!("(+{OFF_CLOCK} on CUPTI's raw clock")));
}

/// The whole dump: every record converted, nothing kept apart, no trace of the rule.
#[test]
fn a_whole_torch_profiler_dump_has_nothing_off_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("dump");
    copy_dump(&dump);
    let d = dump.to_str().unwrap();
    let decode = cupmon(tmp.path(), &["decode", d, "-o", "window.json"]);
    assert_eq!(decode.status.code(), Some(0), "{}", stderr(&decode));
    let w = json(&tmp.path().join("window.json"));
    assert!(w.get("off_clock").is_none());
    let pq = cupmon(tmp.path(), &["export-parquet", d, "-o", "pq"]);
    assert_eq!(pq.status.code(), Some(0), "{}", stderr(&pq));
    assert!(!tmp.path().join("pq/off_clock").exists());
    let sql = std::fs::read_to_string(tmp.path().join("pq/cupmon.sql")).unwrap();
    assert!(!sql.contains("off_clock"));
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Whether `e[key]` is a Unix time (or 0, no time).
fn on_unix_clock(e: &Value, key: &str) -> bool {
    e.get(key)
        .and_then(Value::as_u64)
        .is_none_or(|t| t == 0 || t >= UNIX_NS_FLOOR)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}
