//! The window decoded from each fixture dump equals the fixture's expected_window.json
//! (made by the reference truth_to_window.py with c++filt): same events in the same
//! order, every expected key present with an equal value (cupmon's extra keys allowed),
//! and the same user annotations. Timestamps of torch.profiler's clock (torch_mlp) are
//! converted to Unix ns: they are checked against a line through the fixture's first
//! and last chunk headers, worked out here independently of cupmon's fit.

use std::fs;

use super::common::{fixture_dir, FIXTURES};
use cupmon_records::{ActivityKind, DumpWarning};
use cupmon_trace::{decode_dump_to_window, WindowEvent};
use serde_json::Value;

#[test]
fn fixture_windows_equal_the_expected_windows() {
    for fixture in FIXTURES {
        let dir = fixture_dir(fixture);
        let mut progress_calls = 0;
        let (window, report) = decode_dump_to_window(&dir, |_| progress_calls += 1).unwrap();
        assert!(
            report.warnings.is_empty(),
            "{fixture}: {:?}",
            report.warnings
        );
        assert_eq!(report.unresolved_kernel_names, 0);
        assert_eq!(progress_calls, report.chunks);
        let got = serde_json::to_value(&window).unwrap();
        let want: Value =
            serde_json::from_str(&fs::read_to_string(dir.join("expected_window.json")).unwrap())
                .unwrap();
        let got_events = got["events"].as_array().unwrap();
        let want_events = want["events"].as_array().unwrap();
        assert_eq!(
            got_events.len(),
            want_events.len(),
            "{fixture}: event count"
        );
        let to_unix = chunk_header_line(&dir);
        let mut converted = 0;
        for (i, (g, w)) in got_events.iter().zip(want_events).enumerate() {
            for (key, value) in w.as_object().unwrap() {
                let raw = value
                    .as_u64()
                    .filter(|&t| key.ends_with("_ns") && t != 0 && t < 1e18 as u64);
                if let Some(raw) = raw {
                    let got = g[key].as_u64().unwrap() as f64;
                    let want = to_unix(raw);
                    assert!(
                        (got - want).abs() < 20_000.0,
                        "{fixture} event {i} {key}: {got} vs {want}"
                    );
                    converted += 1;
                    continue;
                }
                assert_eq!(
                    g.get(key),
                    Some(value),
                    "{fixture} event {i} key {key}: {g}"
                );
            }
        }
        let want_converted = if fixture == "torch_mlp" { 562 } else { 0 };
        assert_eq!(converted, want_converted, "{fixture}: timestamps converted");
        assert_eq!(
            got["user_annotations"], want["user_annotations"],
            "{fixture}"
        );
        assert_eq!(got["start_ns"], 0);
        assert_eq!(got["extra_activities"], Value::Array(vec![]));
    }
}

/// Unix ns for a foreign-clock time, by the line through the first and last chunk
/// headers' (CUPTI, Unix) completion pairs.
fn chunk_header_line(dir: &std::path::Path) -> impl Fn(u64) -> f64 {
    let raw = fs::read(dir.join("cupti_monitor_raw_buffers.bin")).unwrap();
    let mut pairs = Vec::new();
    let mut at = 0;
    while at + 48 <= raw.len() {
        let u64_at = |o: usize| u64::from_le_bytes(raw[at + o..at + o + 8].try_into().unwrap());
        let size = u32::from_le_bytes(raw[at + 20..at + 24].try_into().unwrap()) as usize;
        pairs.push((u64_at(32) as f64, u64_at(40) as f64));
        at += 48 + size;
    }
    let (first, last) = (pairs[0], pairs[pairs.len() - 1]);
    let slope = if last.0 > first.0 {
        (last.1 - first.1) / (last.0 - first.0)
    } else {
        1.0
    };
    move |t| first.1 + (t as f64 - first.0) * slope
}

#[test]
fn report_counts_records_per_kind() {
    let (_, report) = decode_dump_to_window(fixture_dir("cuda_workload"), |_| {}).unwrap();
    let count = |k| report.records_by_kind.get(&k).copied().unwrap_or(0);
    // fixtures/README.md: 16 kernels, 12 memcpy, 5 memset, 56 runtime, 136 driver,
    // 56 external correlation, 14 overhead, 3 cuda_event, 10 synchronization.
    assert_eq!(count(ActivityKind::CONCURRENT_KERNEL), 16);
    assert_eq!(count(ActivityKind::MEMCPY), 12);
    assert_eq!(count(ActivityKind::MEMSET), 5);
    assert_eq!(count(ActivityKind::RUNTIME), 56);
    assert_eq!(count(ActivityKind::DRIVER), 136);
    assert_eq!(count(ActivityKind::EXTERNAL_CORRELATION), 56);
    assert_eq!(count(ActivityKind::OVERHEAD), 14);
    assert_eq!(count(ActivityKind::CUDA_EVENT), 3);
    assert_eq!(count(ActivityKind::SYNCHRONIZATION), 10);
    assert_eq!(report.records, 308);
    assert_eq!(report.chunks, 2);
}

#[test]
fn dump_without_side_files_names_kernels_by_pointer() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture_dir("cuda_workload");
    for f in ["cupti_monitor_meta.bin", "cupti_monitor_raw_buffers.bin"] {
        fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let (window, report) = decode_dump_to_window(tmp.path(), |_| {}).unwrap();
    assert!(window.user_annotations.is_empty());
    assert_eq!(report.unresolved_kernel_names, 16);
    assert!(report
        .warnings
        .iter()
        .all(|w| !matches!(w, DumpWarning::Truncated(_))));
    let kernel = window
        .events
        .iter()
        .find_map(|e| match e {
            WindowEvent::Kernel(k) => Some(k),
            _ => None,
        })
        .unwrap();
    // The first kernel: demo::scale<float>, name pointer 94549417777504.
    assert_eq!(kernel.name, "kernel@0x55fe0075d960");
    assert!(!kernel.name_resolved);
    assert_eq!(window.cupmon.as_ref().unwrap().unresolved_kernel_names, 16);
}
