//! The whole merge on an arbitrary CPU trace and window (split at the first
//! NUL byte; without one, the bytes are the CPU trace and the window is a
//! fixed one): an error or a JSON document, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

const WINDOW: &[u8] = br#"{"events":[{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"},{"kind":"external_correlation","external_kind":4,"external_id":7,"correlation_id":3}],"user_annotations":{"7":"step"}}"#;

fuzz_target!(|data: &[u8]| {
    let (cpu, window) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, WINDOW),
    };
    let out = std::env::temp_dir().join(format!("cupmon-fuzz-merge-{}.json", std::process::id()));
    if cupmon_trace::internals::merge_bytes(cpu, window, &out, 1 << 16).is_ok() {
        let written = std::fs::read(&out).expect("the merged trace was written");
        assert!(cupmon_trace::internals::is_json(&written), "the merged trace is not JSON");
    }
});
