//! Bad input: one clear line naming the file and the place, exit code 2, no
//! output file left behind, and nothing the user had is touched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cupmon(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(args)
        .output()
        .expect("run cupmon")
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(rel)
}

const WINDOW: &str = r#"{"events":[{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}]}"#;
const CPU: &str = r#"{"baseTimeNanoseconds":1790857026000000000,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1.25}]}"#;

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new(cpu: &str, window: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("cpu.json"), cpu).expect("write");
        std::fs::write(dir.path().join("window.json"), window).expect("write");
        Case { dir }
    }
    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
    fn merge(&self) -> Output {
        cupmon(&[
            "merge",
            "--cpu",
            &self.path("cpu.json"),
            "--window",
            &self.path("window.json"),
            "-o",
            &self.path("out.json"),
        ])
    }
    /// Only the inputs remain: no output and no temporary file.
    fn assert_no_output(&self) {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["cpu.json", "window.json"]);
    }
}

fn assert_bad_input(out: &Output, mentions: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr}");
    assert!(lines[0].starts_with("cupmon: error: "), "{stderr}");
    for m in mentions {
        assert!(stderr.contains(m), "{m:?} not in {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn cpu_trace_not_json() {
    let c = Case::new("this is not json", WINDOW);
    assert_bad_input(&c.merge(), &["cpu.json", "line 1 column 1"]);
    c.assert_no_output();
}

#[test]
fn cpu_trace_truncated() {
    let c = Case::new(&CPU[..CPU.len() - 20], WINDOW);
    assert_bad_input(&c.merge(), &["cpu.json", "unexpected end of file"]);
    c.assert_no_output();
}

#[test]
fn cpu_trace_events_of_the_wrong_type() {
    let c = Case::new(r#"{"traceEvents": 5}"#, WINDOW);
    assert_bad_input(&c.merge(), &["cpu.json", "traceEvents"]);
    c.assert_no_output();
    let c = Case::new(r#"{"traceEvents": [1]}"#, WINDOW);
    assert_bad_input(&c.merge(), &["cpu.json", "traceEvents[0]"]);
    c.assert_no_output();
}

#[test]
fn cpu_event_with_a_wrong_field_type() {
    let c = Case::new(
        r#"{"traceEvents": [{"ph": "X", "name": ["a"], "ts": 1}]}"#,
        WINDOW,
    );
    assert_bad_input(&c.merge(), &["cpu.json", "'name'"]);
    c.assert_no_output();
}

#[test]
fn window_not_json_or_truncated() {
    let c = Case::new(CPU, "{\"events\": [");
    assert_bad_input(&c.merge(), &["window.json", "end of data"]);
    c.assert_no_output();
    let c = Case::new(CPU, "[oops]");
    assert_bad_input(&c.merge(), &["window.json", "line 1 column 2"]);
    c.assert_no_output();
}

#[test]
fn window_with_wrong_types() {
    let c = Case::new(CPU, r#"{"events": 5}"#);
    assert_bad_input(&c.merge(), &["window.json", "'events' must be a list"]);
    let c = Case::new(CPU, r#"{"events": [{"kind": "kernel", "device_id": 0}]}"#);
    assert_bad_input(&c.merge(), &["window.json", "event 0", "missing field"]);
    let c = Case::new(
        CPU,
        r#"{"events": [], "thread_resource_map": {"1": {"2": null}}}"#,
    );
    assert_bad_input(&c.merge(), &["window.json", "thread_resource_map"]);
    c.assert_no_output();
}

#[test]
fn missing_input_file() {
    let c = Case::new(CPU, WINDOW);
    let out = cupmon(&[
        "merge",
        "--cpu",
        &c.path("nope.json"),
        "--window",
        &c.path("window.json"),
        "-o",
        &c.path("out.json"),
    ]);
    assert_bad_input(&out, &["nope.json", "No such file"]);
    c.assert_no_output();
}

#[test]
fn unwritable_output_directory() {
    let c = Case::new(CPU, WINDOW);
    let out = cupmon(&[
        "merge",
        "--cpu",
        &c.path("cpu.json"),
        "--window",
        &c.path("window.json"),
        "-o",
        &c.path("missing/dir/out.json"),
    ]);
    assert_bad_input(&out, &["out.json", "does not exist"]);
    let ro = c.dir.path().join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    let mut perms = std::fs::metadata(&ro).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o500);
    std::fs::set_permissions(&ro, perms).expect("chmod");
    let target = ro.join("out.json");
    let out = cupmon(&[
        "merge",
        "--cpu",
        &c.path("cpu.json"),
        "--window",
        &c.path("window.json"),
        "-o",
        &target.display().to_string(),
    ]);
    // Root ignores directory permissions; only check when the write was refused.
    if out.status.success() {
        assert!(target.exists());
    } else {
        assert_bad_input(&out, &["out.json"]);
        assert_eq!(std::fs::read_dir(&ro).expect("read_dir").count(), 0);
    }
}

#[test]
fn output_that_would_replace_an_input_is_refused() {
    let c = Case::new(CPU, WINDOW);
    let out = cupmon(&[
        "merge",
        "--cpu",
        &c.path("cpu.json"),
        "--window",
        &c.path("window.json"),
        "-o",
        &c.path("cpu.json"),
    ]);
    assert_bad_input(&out, &["cpu.json", "replace an input"]);
    assert_eq!(
        std::fs::read_to_string(c.path("cpu.json")).expect("read"),
        CPU
    );
}

#[test]
fn good_input_merges_and_says_where_the_trace_went() {
    let c = Case::new(CPU, WINDOW);
    let out = c.merge();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().expect("a line");
    assert!(
        last.contains("out.json") && last.contains("https://ui.perfetto.dev"),
        "{last}"
    );
}

#[test]
fn export_and_decode_of_the_fixture() {
    let dir = tempfile::tempdir().expect("tempdir");
    let window = dir.path().join("w.json");
    let out = cupmon(&[
        "decode",
        &fixture("cuda_workload").display().to_string(),
        "-o",
        &window.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = dir.path().join("t.json.gz");
    let out = cupmon(&[
        "export",
        "--window",
        &window.display().to_string(),
        "-o",
        &trace.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ui.perfetto.dev"));
}

#[test]
fn decode_of_a_damaged_dump_names_file_chunk_and_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in [
        "cupti_monitor_meta.bin",
        "cupti_monitor_raw_buffers.bin",
        "kernel_names.tsv",
    ] {
        std::fs::copy(fixture("torch_mlp").join(name), dir.path().join(name)).expect("copy");
    }
    let raw = dir.path().join("cupti_monitor_raw_buffers.bin");
    let mut bytes = std::fs::read(&raw).expect("read");
    // Truncate in the middle of the last chunk: complete chunks decode, exit 0, a warning.
    bytes.truncate(bytes.len() - 100);
    std::fs::write(&raw, &bytes).expect("write");
    // Outside the dump: cupmon refuses to write into a dump it reads.
    let out_dir = tempfile::tempdir().expect("tempdir");
    let out_path = out_dir.path().join("w.json");
    let out = cupmon(&[
        "decode",
        &dir.path().display().to_string(),
        "-o",
        &out_path.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));
    // A bad magic in the first chunk is skipped up to the next valid chunk header, with
    // a warning naming the byte range.
    bytes[0..8].copy_from_slice(b"XXXXXXXX");
    std::fs::write(&raw, &bytes).expect("write");
    let out = cupmon(&["stats", &dir.path().display().to_string()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("cupti_monitor_raw_buffers.bin: skipped bytes 0..33528 (33528 bytes)"),
        "{stderr}"
    );
    // With no valid chunk header anywhere it is an error naming the file, chunk and byte.
    let headers: Vec<usize> = (0..bytes.len() - 8)
        .filter(|&i| &bytes[i..i + 8] == b"CUPMRBUF")
        .collect();
    for at in headers {
        bytes[at..at + 8].copy_from_slice(b"XXXXXXXX");
    }
    std::fs::write(&raw, &bytes).expect("write");
    let out = cupmon(&["stats", &dir.path().display().to_string()]);
    assert_bad_input(
        &out,
        &[
            "cupti_monitor_raw_buffers.bin",
            "chunk 0",
            "byte 0",
            "magic",
        ],
    );
}

#[test]
fn merge_with_an_event_over_max_event_size_names_the_file_and_offset() {
    let huge = format!(
        r#"{{"traceEvents": [{{"ph": "X", "name": "{}"}}]}}"#,
        "A".repeat(5000)
    );
    let c = Case::new(&huge, WINDOW);
    let mut args: Vec<String> = ["merge", "--cpu", &c.path("cpu.json"), "--window"]
        .map(String::from)
        .into();
    args.extend([c.path("window.json"), "-o".into(), c.path("out.json")]);
    args.extend(["--max-event-size".into(), "1KiB".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_bad_input(
        &cupmon(&args),
        &["cpu.json", "(byte 17)", "1 KiB", "--max-event-size"],
    );
    c.assert_no_output();
    // The same file under the default limit merges.
    let out = c.merge();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn export_with_a_window_event_over_max_event_size_names_the_file_and_offset() {
    let window = format!(
        r#"{{"events": [{{"kind": "kernel", "name": "{}"}}]}}"#,
        "A".repeat(5000)
    );
    let c = Case::new(CPU, &window);
    let out = cupmon(&[
        "export",
        "--window",
        &c.path("window.json"),
        "-o",
        &c.path("out.json"),
        "--max-event-size",
        "2000",
    ]);
    assert_bad_input(&out, &["window.json", "(byte 12)", "2000 bytes"]);
    c.assert_no_output();
}

#[test]
fn max_event_size_must_be_a_size() {
    let c = Case::new(CPU, WINDOW);
    let out = cupmon(&[
        "merge",
        "--cpu",
        &c.path("cpu.json"),
        "--window",
        &c.path("window.json"),
        "-o",
        &c.path("out.json"),
        "--max-event-size",
        "4 parsecs",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a size"));
    c.assert_no_output();
}
