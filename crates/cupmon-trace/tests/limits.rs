//! Memory stays bounded by the largest legitimate value: one JSON value (an
//! event, a top-level member) larger than `max_event_bytes` is an error that
//! names the file and the byte offset where the value starts, whether the
//! input is plain or `.gz`. Small limits keep these fast.

use std::io::Write;
use std::path::{Path, PathBuf};

use cupmon_trace::{merge_files, MergeOptions, MergeWindow, TraceError, WindowSource};

const KERNEL: &str = r#"{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}"#;
const CPU_EVENT: &str =
    r#"{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1.25}"#;
const LIMIT: u64 = 64 << 10;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if name.ends_with(".gz") {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text.as_bytes()).expect("gzip");
        std::fs::write(&path, enc.finish().expect("gzip")).expect("write");
    } else {
        std::fs::write(&path, text).expect("write");
    }
    path
}

fn window() -> MergeWindow {
    MergeWindow::from_json(format!(r#"{{"events":[{KERNEL}]}}"#).as_bytes(), "w").expect("window")
}

fn merge(cpu: &Path, limit: u64) -> Result<(), TraceError> {
    let out = cpu.with_file_name("out.json");
    let options = MergeOptions {
        max_event_bytes: limit,
        ..MergeOptions::default()
    };
    merge_files(
        cpu,
        WindowSource::Loaded(&window()),
        &out,
        &options,
        &mut |_| {},
    )
    .map(drop)
}

/// The error is bad input naming `file`, the byte `offset` and the limit.
fn assert_too_large(result: Result<(), TraceError>, file: &Path, offset: usize, limit: &str) {
    match result {
        Err(TraceError::Input {
            file: f,
            location,
            msg,
        }) => {
            assert_eq!(f, file.display().to_string());
            assert!(
                location.ends_with(&format!("(byte {offset})")),
                "{location}"
            );
            assert!(
                msg.contains(limit) && msg.contains("max_event_bytes"),
                "{msg}"
            );
        }
        other => panic!("expected a too-large error, got {other:?}"),
    }
}

#[test]
fn cpu_event_over_max_event_bytes_in_gz_is_an_error_naming_file_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let head = format!(r#"{{"traceEvents":[{CPU_EVENT}, "#);
    let huge = format!(r#"{{"ph":"X","name":"{}"}}"#, "A".repeat(4 << 20));
    let cpu = write(dir.path(), "cpu.json.gz", &format!("{head}{huge}]}}"));
    assert_too_large(merge(&cpu, LIMIT), &cpu, head.len(), "64 KiB");
    assert!(!dir.path().join("out.json").exists());
}

#[test]
fn cpu_event_of_exactly_max_event_bytes_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = "B".repeat(1000);
    let event = format!(r#"{{"ph":"X","cat":"cpu_op","name":"{name}","ts":1,"dur":2}}"#);
    let head = r#"{"traceEvents":["#;
    let cpu = write(dir.path(), "cpu.json", &format!("{head}{event}]}}"));
    merge(&cpu, event.len() as u64).expect("an event of exactly the limit is read");
    assert_too_large(
        merge(&cpu, event.len() as u64 - 1),
        &cpu,
        head.len(),
        "bytes",
    );
}

#[test]
fn top_level_members_over_max_event_bytes_together_are_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let value = format!("\"{}\"", "C".repeat(10_000));
    let members: Vec<String> = (0..10).map(|i| format!(r#""m{i}":{value}"#)).collect();
    let text = format!(r#"{{{},"traceEvents":[{CPU_EVENT}]}}"#, members.join(","));
    let cpu = write(dir.path(), "many.json", &text);
    let seventh = text.find(r#""m6""#).expect("m6");
    assert_too_large(merge(&cpu, LIMIT), &cpu, seventh, "64 KiB");
    // The same key set again and again replaces its value: nothing piles up.
    let members: Vec<String> = (0..10).map(|_| format!(r#""m":{value}"#)).collect();
    let text = format!(r#"{{{},"traceEvents":[{CPU_EVENT}]}}"#, members.join(","));
    merge(&write(dir.path(), "same.json", &text), LIMIT).expect("repeated key");
}

#[test]
fn window_event_over_max_event_bytes_in_gz_is_an_error_naming_file_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let head = format!(r#"{{"events":[{KERNEL},"#);
    let huge = format!(r#"{{"kind":"kernel","name":"{}"}}"#, "A".repeat(4 << 20));
    let path = write(dir.path(), "window.json.gz", &format!("{head}{huge}]}}"));
    let result = MergeWindow::read_with_limit(&path, LIMIT).map(drop);
    assert_too_large(result, &path, head.len(), "64 KiB");
}

#[test]
fn window_value_whose_parsed_form_exceeds_max_event_bytes_is_an_error() {
    // 40 KB of text, but about 640 KB once every 0 is a parsed value.
    let dir = tempfile::tempdir().expect("tempdir");
    let zeros = vec!["0"; 20_000].join(",");
    let head = format!(r#"{{"events":[{KERNEL},"#);
    let event = format!(r#"{{"kind":"cuda_event","name":[{zeros}],"end_ns":1}}"#);
    let path = write(dir.path(), "window.json", &format!("{head}{event}]}}"));
    let result = MergeWindow::read_with_limit(&path, LIMIT).map(drop);
    assert_too_large(result, &path, head.len(), "64 KiB");
    let window = MergeWindow::read_with_limit(&path, 4 << 20).expect("under a 4 MiB limit");
    assert_eq!(window.len(), 2);
}

#[test]
fn window_user_annotations_over_max_event_bytes_are_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let annotations: Vec<String> = (0..5000).map(|i| format!(r#""{i}":"step {i}""#)).collect();
    let head = format!(r#"{{"events":[{KERNEL}],"user_annotations":"#);
    let text = format!("{head}{{{}}}}}", annotations.join(","));
    let path = write(dir.path(), "window.json", &text);
    let result = MergeWindow::read_with_limit(&path, LIMIT).map(drop);
    assert_too_large(result, &path, head.len(), "64 KiB");
    MergeWindow::read_with_limit(&path, 4 << 20).expect("under a 4 MiB limit");
}

#[test]
fn window_from_dev_zero_is_rejected_at_byte_0() {
    let path = Path::new("/dev/zero");
    if !path.exists() {
        cupmon_test_skip::skipped!("/dev/zero does not exist here");
        return;
    }
    match MergeWindow::read(path) {
        Err(TraceError::Input { file, location, .. }) => {
            assert_eq!(file, "/dev/zero");
            // Not a regular file: no line and column (reading it again could wait).
            assert_eq!(location, "byte 0");
        }
        other => panic!("expected an input error, got {other:?}"),
    }
}
