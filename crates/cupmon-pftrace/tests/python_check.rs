//! The same traces read by Perfetto's own Python protos
//! (tests/python/check_pftrace.py with the `perfetto` package): in the venv
//! of scripts/test-python.sh (target/python-venv), one from
//! tests/python/pftrace-venv.sh, or $CUPMON_PFTRACE_PYTHON; SKIPPED (loudly)
//! when no interpreter has the package.

use std::path::{Path, PathBuf};
use std::process::Command;

use cupmon_pftrace::{Arg, ArgValue, CounterUnit, PftraceWriter, Slice, WriterOptions};
use serde_json::Value;

const T0: u64 = 1_764_000_000_000_000_000;
const KERNEL: &str = "ampere_sgemm_128x64_nn";
const REPEATS: u64 = 20_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An interpreter that can import perfetto_trace_pb2, if there is one.
fn python() -> Option<PathBuf> {
    let candidates = std::env::var_os("CUPMON_PFTRACE_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            root().join("target/python-venv/bin/python"),
            root().join("target/pftrace-venv/bin/python"),
        ]);
    candidates.into_iter().find(|py| {
        Command::new(py)
            .args([
                "-c",
                "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
            ])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn write_trace(path: &Path, gz: bool) -> Vec<u8> {
    let opts = WriterOptions {
        realtime_now_ns: Some(T0),
        ..WriterOptions::default()
    };
    let mut w = PftraceWriter::with_options(Vec::new(), opts).unwrap();
    w.process(4242, "python", &["CPU"], 4242).unwrap();
    let thread = w.thread(4242, 4243, "thread 4243", 4243).unwrap();
    w.process(0, "python", &["GPU 0"], 5_000_000).unwrap();
    let stream = w.thread(0, 7, "stream 7 ", 7).unwrap();
    for i in 0..REPEATS {
        let t = T0 + 10_000 * i;
        let corr = i + 1;
        let args = [Arg::new("correlation", ArgValue::Int(corr as i64))];
        let launch = Slice {
            category: "cuda_runtime",
            args: &args,
            flow_ids: &[corr],
            ..Slice::new(t, 500, "cudaLaunchKernel")
        };
        w.slice(thread, &launch).unwrap();
        let kernel = Slice {
            category: "kernel",
            args: &args,
            terminating_flow_ids: &[corr],
            ..Slice::new(t + 1_000, 3_000, KERNEL)
        };
        w.slice(stream, &kernel).unwrap();
    }
    // One overlapping pair on the stream, after the rest.
    let end = T0 + 10_000 * REPEATS;
    w.slice(stream, &Slice::new(end, 1_000, "first")).unwrap();
    w.slice(stream, &Slice::new(end + 500, 1_000, "second"))
        .unwrap();
    let mem = w
        .counter_track(None, "GPU 0 memory", CounterUnit::SizeBytes)
        .unwrap();
    w.counter(mem, T0, 1i64 << 30).unwrap();
    let (bytes, _) = w.finish().unwrap();
    let file_bytes = if gz {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&bytes).unwrap();
        e.finish().unwrap()
    } else {
        bytes.clone()
    };
    std::fs::write(path, file_bytes).unwrap();
    bytes
}

fn check(py: &Path, trace: &Path) -> Value {
    let script = root().join("tests/python/check_pftrace.py");
    let out = Command::new(py).arg(&script).arg(trace).output().unwrap();
    assert!(
        out.status.success(),
        "check_pftrace failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn perfettos_python_protos_read_the_trace() {
    let Some(py) = python() else {
        cupmon_test_skip::skipped!("no Python with the perfetto package (run scripts/test-python.sh or tests/python/pftrace-venv.sh, or set CUPMON_PFTRACE_PYTHON)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for gz in [false, true] {
        let path = dir
            .path()
            .join(if gz { "t.pftrace.gz" } else { "t.pftrace" });
        let bytes = write_trace(&path, gz);
        let r = check(&py, &path);
        assert_eq!(r["errors"], Value::Array(vec![]), "{r:#}");
        assert_eq!(r["clock"]["primary_trace_clock"], "BUILTIN_CLOCK_REALTIME");
        assert_eq!(r["clock"]["defaults_timestamp_clock_id"], 1);
        assert_eq!(r["clock"]["packets_overriding_clock"], 0);
        let n = REPEATS + 1;
        assert_eq!(r["events"]["TYPE_SLICE_BEGIN"], 2 * REPEATS + 2);
        assert_eq!(r["events"]["TYPE_SLICE_END"], 2 * REPEATS + 2);
        assert_eq!(r["events"]["TYPE_COUNTER"], 1);
        assert_eq!(r["names"][KERNEL], REPEATS);
        // Interned: one entry per distinct string, the kernel name once in the file.
        assert_eq!(r["interned_entries"]["event_names"], 4);
        assert_eq!(r["interned_entries"]["event_categories"], 2);
        assert_eq!(r["interned_entries"]["debug_annotation_names"], 1);
        assert_eq!(
            memchr::memmem::find_iter(&bytes, KERNEL.as_bytes()).count(),
            1
        );
        assert_eq!(r["flows"]["connected"], REPEATS, "{:#}", r["flows"]);
        assert_eq!(r["first_args"][KERNEL]["correlation"], 1);
        // The overlapping pair: two tracks; stream 7 holds the kernels and "first".
        let per_track = r["slices_per_track"].as_object().unwrap();
        let stream = per_track
            .iter()
            .find(|(k, _)| k.starts_with("stream 7  ["))
            .unwrap();
        assert_eq!(stream.1, &Value::from(n));
        let overlap = per_track
            .iter()
            .find(|(k, _)| k.starts_with("stream 7 (overlap) ["))
            .unwrap();
        assert_eq!(overlap.1, &Value::from(1));
        let gpu = r["tracks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["labels"] == serde_json::json!(["GPU 0"]))
            .unwrap();
        assert_eq!(
            (&gpu["pid"], &gpu["process_name"]),
            (&Value::from(0), &Value::from("python"))
        );
    }
}

#[test]
fn the_python_check_fails_on_a_broken_trace() {
    let Some(py) = python() else {
        cupmon_test_skip::skipped!("no Python with the perfetto package (run scripts/test-python.sh or tests/python/pftrace-venv.sh, or set CUPMON_PFTRACE_PYTHON)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.pftrace");
    let mut bytes = write_trace(&dir.path().join("whole.pftrace"), false);
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&path, &bytes).unwrap();
    let out = Command::new(&py)
        .arg(root().join("tests/python/check_pftrace.py"))
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("runs past the end"));
}
