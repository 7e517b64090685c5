//! `cupmon run` end to end without a GPU: a stand-in CUDA program (the
//! cupmon-inject example `fake_cuda_app`) loads the injection library as the
//! CUDA driver would and launches work through the fake libcupti.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use cupmon_trace::decode_dump_to_window;
use cupmon_trace::WindowEvent;

fn target_dir() -> PathBuf {
    // CARGO_BIN_EXE_cupmon is target/<profile>/cupmon.
    Path::new(env!("CARGO_BIN_EXE_cupmon"))
        .parent()
        .expect("profile dir")
        .to_path_buf()
}

/// Build the example app and the injection library once (same profile as this test).
fn app() -> &'static Path {
    static APP: OnceLock<PathBuf> = OnceLock::new();
    APP.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "cupmon-inject",
            "--lib",
            "--example",
            "fake_cuda_app",
            "--manifest-path",
        ])
        .arg(&manifest);
        if target_dir().ends_with("release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("cargo build");
        assert!(status.success(), "building cupmon-inject failed");
        target_dir().join("examples/fake_cuda_app")
    })
}

/// `cupmon run -o DIR EXTRA -- APP STEPS` with the fake libcupti (the program is
/// `launcher APP STEPS` when a launcher is given).
pub(crate) fn command(dir: &Path, extra: &[&str], launcher: &[&str], steps: &[&str]) -> Command {
    // The app first: building it rebuilds the fake in place, so look for the fake after.
    let app = app();
    let fake = cupmon_test_support::fake_library_path();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cupmon"));
    command
        .arg("run")
        .arg("-o")
        .arg(dir)
        .args(extra)
        .arg("--")
        .args(launcher)
        .arg(app)
        .args(steps)
        .env("CUPMON_LIBCUPTI", fake)
        .env("CUPMON_LIBCUDA", fake)
        .env(
            "CUPMON_INJECT_LIBRARY",
            target_dir().join("libcupmon_inject.so"),
        );
    command
}

/// The injection library, built (with the app) for this test's profile.
pub(crate) fn inject_library() -> PathBuf {
    let _ = app();
    target_dir().join("libcupmon_inject.so")
}

fn run(dir: &Path, extra: &[&str], steps: &[&str]) -> Output {
    command(dir, extra, &[], steps)
        .output()
        .expect("run cupmon")
}

#[test]
fn with_trace_format_pftrace_the_window_trace_is_a_perfetto_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(
        dir.path(),
        &[
            "--window-at",
            "0.1",
            "--window-for",
            "0.3",
            "--trace-format",
            "pftrace",
        ],
        &["sleep", "200", "launch", "20", "sleep", "500"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let dump = only_dump(dir.path());
    assert!(!dump.join("window-0.trace.json.gz").exists());
    let trace = std::fs::read(dump.join("window-0.trace.pftrace")).expect("window-0.trace.pftrace");
    // Trace.packet (field 1, length-delimited) first, as Perfetto reads it.
    assert_eq!(trace.first(), Some(&0x0a), "{stderr}");
    assert!(dump.join("window-0.json").is_file());
}

#[test]
fn the_traced_process_writes_only_the_window_json_and_cupmon_run_makes_the_trace() {
    // The program with the injection library alone (no `cupmon run` to make the
    // trace afterwards): the window's JSON, and no trace file of any format.
    let dir = tempfile::tempdir().expect("tempdir");
    let library = inject_library();
    let fake = cupmon_test_support::fake_library_path();
    let out = Command::new(app())
        .args(["sleep", "200", "launch", "20", "sleep", "500"])
        .env("CUDA_INJECTION64_PATH", &library)
        .env("CUPMON_INJECT_LIBRARY", &library)
        .env("CUPMON_LIBCUPTI", fake)
        .env("CUPMON_LIBCUDA", fake)
        .env("CUPMON_OUTPUT_DIR", dir.path())
        .env("CUPMON_WINDOW_AT", "0.1")
        .env("CUPMON_WINDOW_FOR", "0.3")
        .output()
        .expect("run the program");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let dump = only_dump(dir.path());
    let names: Vec<String> = std::fs::read_dir(&dump)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"window-0.json".to_owned()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains(".trace")),
        "the traced process wrote a trace: {names:?}"
    );
    // The same program under `cupmon run`: the trace is there when the run ends.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(
        dir.path(),
        &["--window-at", "0.1", "--window-for", "0.3"],
        &["sleep", "200", "launch", "20", "sleep", "500"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let trace = only_dump(dir.path()).join("window-0.trace.json.gz");
    assert!(stderr.contains(&trace.display().to_string()), "{stderr}");
    let text = crate::util::read_json(&trace).to_string();
    assert!(text.contains("cupmon window 0 of pid "), "{text:.300}");
}

pub(crate) fn only_dump(dir: &Path) -> PathBuf {
    let dumps: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    dumps.into_iter().next().expect("one")
}

pub(crate) fn kernels(dump: &Path) -> usize {
    let (window, _) = decode_dump_to_window(dump, |_| {}).expect("decode");
    window
        .events
        .iter()
        .filter(|e| matches!(e, WindowEvent::Kernel(_)))
        .count()
}

#[test]
fn records_every_kernel_and_a_scheduled_window_and_exits_with_the_programs_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(
        dir.path(),
        &["--window-at", "0.2", "--window-for", "0.4"],
        &[
            "launch", "100", "sleep", "400", "launch", "50", "sleep", "600", "launch", "5",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("155 kernels"), "{stderr}");
    assert!(stderr.contains("dropped records: 0"), "{stderr}");
    assert!(
        stderr.contains("kernels: 155 launched, 155 recorded (kept + retired), 0 records counted as dropped, 0 unaccounted"),
        "the launch counter agrees with the records: {stderr}"
    );
    let dump = only_dump(dir.path());
    assert_eq!(kernels(&dump), 155);
    let window: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dump.join("window-0.json")).expect("window"))
            .expect("json");
    let events = window["events"].as_array().expect("events");
    let count = |k: &str| events.iter().filter(|e| e["kind"] == k).count();
    assert_eq!((count("kernel"), count("cuda_runtime")), (50, 50));
    assert!(dump.join("window-0.trace.json.gz").is_file());
    // `cupmon stats` reports the buffers and the dump writer's time from the meta.
    let stats = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("stats")
        .arg(&dump)
        .output()
        .expect("cupmon stats");
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(text.contains("buffers: at most "), "{text}");
    assert!(text.contains(" of 512 lent to CUPTI"), "{text}"); // 2 GiB of 4 MiB buffers
    assert!(text.contains("dump writer: busy "), "{text}");
}

#[test]
fn sigterm_flushes_and_sigkill_leaves_a_readable_dump() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(dir.path(), &[], &["launch", "40", "sigterm"]);
    assert_eq!(out.status.code(), Some(128 + 15));
    assert_eq!(kernels(&only_dump(dir.path())), 40);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(
        dir.path(),
        &["--flush-period", "0.1"],
        &["launch", "40", "sleep", "500", "launch", "3", "sigkill"],
    );
    assert_eq!(out.status.code(), Some(128 + 9));
    // The 40 flushed by the timer survive; the last 3 were never written.
    assert_eq!(kernels(&only_dump(dir.path())), 40);
    // The meta still says the session is open: the count of dropped records is unknown.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "dropped records: unknown (the process ended without closing its dump (killed?)"
        ),
        "{stderr}"
    );
}

#[test]
fn regression_a_program_without_cuda_left_an_empty_dump_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prof = dir.path().join("prof");
    let out = run(&prof, &[], &["nocuda"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("the program never used CUDA"), "{stderr}");
    assert!(stderr.contains("no dump written"), "{stderr}");
    assert!(
        !prof.exists(),
        "the output directory made for the run is gone"
    );
}

#[test]
fn regression_run_on_a_machine_without_a_driver_never_said_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = command(dir.path(), &[], &[], &["nocuda"])
        .env("CUPMON_LIBCUDA", "/nonexistent/libcuda.so.1")
        .output()
        .expect("run cupmon");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no NVIDIA driver found"), "{stderr}");
    assert!(stderr.contains("/nonexistent/libcuda.so.1"), "{stderr}");
    assert!(!stderr.contains("never used CUDA"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0);
}

#[test]
fn regression_a_launcher_that_launched_no_gpu_work_left_a_dump_in_window_and_report() {
    // As torchrun's launcher: a process that initialises CUDA and launches
    // nothing, then one that launches (its worker). Only the worker's dump stays.
    let dir = tempfile::tempdir().expect("tempdir");
    let app = app().display().to_string();
    let script = format!("'{app}' sleep 50 && '{app}' launch 5");
    let out = command(dir.path(), &[], &["sh", "-c", &script], &[])
        .output()
        .expect("run cupmon");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let dump = only_dump(dir.path());
    assert_eq!(kernels(&dump), 5, "{stderr}");
    // The launcher alone: nothing recorded, and said.
    let alone = tempfile::tempdir().expect("tempdir");
    let out = run(alone.path(), &[], &["sleep", "50"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the program never used CUDA"), "{stderr}");
    assert_eq!(std::fs::read_dir(alone.path()).expect("ls").count(), 0);
}

#[test]
fn a_missing_program_is_bad_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The injection library must exist, so that the error is about the program.
    let _ = app();
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(["run", "-o"])
        .arg(dir.path())
        .args(["--", "/nonexistent/program"])
        .env(
            "CUPMON_INJECT_LIBRARY",
            target_dir().join("libcupmon_inject.so"),
        )
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/program"));
}

#[test]
fn invalid_settings_are_refused_before_the_program_starts() {
    /// Flags, environment, what the message must say.
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 5] = [
        (
            &["--buffer-size", "abc"],
            &[],
            "CUPMON_BUFFER_SIZE (--buffer-size) = \"abc\"",
        ),
        (
            &["--buffer-mib", "200", "--max-outstanding", "256MiB"],
            &[],
            "must hold at least two buffers",
        ),
        (&["--flush-period", "1e30"], &[], "10ms to 1h"),
        (
            &[],
            &[("CUPMON_BUFFER_SIZE", "abc")],
            "allowed: 64KiB to 1GiB",
        ),
        (
            &["--kinds", "NAME"],
            &[],
            "not an activity kind cupmon records",
        ),
    ];
    for (flags, env, want) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("started");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cupmon"));
        cmd.arg("run")
            .arg("-o")
            .arg(dir.path().join("out"))
            .args(flags);
        cmd.args(["--", "touch"]).arg(&marker);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run cupmon");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(want), "{flags:?}: {stderr}");
        assert!(stderr.contains("not starting the program"), "{stderr}");
        assert!(!marker.exists(), "{flags:?}: the program ran");
    }
}

#[test]
fn a_refusal_inside_the_program_is_reported_with_its_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = app();
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("run")
        .arg("-o")
        .arg(dir.path())
        .arg("--")
        .arg(app)
        .args(["launch", "5"])
        .env("CUPMON_LIBCUPTI", cupmon_test_support::fake_library_path())
        .env("CUPMON_LIBCUDA", "/nonexistent/libcuda.so.1")
        .env(
            "CUPMON_INJECT_LIBRARY",
            target_dir().join("libcupmon_inject.so"),
        )
        .output()
        .expect("run cupmon");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("was not monitored"), "{stderr}");
    assert!(stderr.contains("driver"), "{stderr}");
    assert!(!stderr.contains("never used CUDA"), "{stderr}");
}

#[test]
fn every_setting_flag_reaches_the_injection_library() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(
        dir.path(),
        &[
            "--max-outstanding",
            "32MiB",
            "--buffer-size",
            "1MiB",
            "--log",
            "info",
        ],
        &["launch", "20"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let dump = only_dump(dir.path());
    let meta = cupmon_records::MetaFile::read(dump.join("cupti_monitor_meta.bin")).expect("meta");
    assert_eq!(meta.json()["buffer_size"], 1 << 20);
    assert_eq!(meta.json()["buffers"]["cap"], 32);
    // What `cupmon report`'s header shows: the program's command line and the host.
    let command = meta.json()["command"].as_array().expect("command");
    assert_eq!(command.last().and_then(|a| a.as_str()), Some("20"));
    assert!(meta.json()["host"].as_str().is_some_and(|h| !h.is_empty()));
}

/// Wait until `dir` holds a dump whose control channel is up.
fn wait_for_control(dir: &Path) -> PathBuf {
    for _ in 0..100 {
        if let Some(dump) = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.join("cupmon_control.json").is_file())
        {
            return dump;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no control channel appeared in {}", dir.display());
}

#[test]
fn cupmon_window_and_status_reach_a_running_program_from_another_shell() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = app();
    let mut run = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("run")
        .arg("-o")
        .arg(dir.path())
        .arg("--")
        .arg(app)
        .args([
            "launch", "5", "sleep", "1200", "launch", "7", "sleep", "2000", "launch", "3",
        ])
        .env("CUPMON_LIBCUPTI", cupmon_test_support::fake_library_path())
        .env("CUPMON_LIBCUDA", cupmon_test_support::fake_library_path())
        .env(
            "CUPMON_INJECT_LIBRARY",
            target_dir().join("libcupmon_inject.so"),
        )
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cupmon");
    let dump = wait_for_control(dir.path());
    let status = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("status")
        .arg(dir.path())
        .output()
        .expect("status");
    let text = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{text}");
    // The program's row (its window closed) names the program however long the
    // path of the checkout it runs from: a long command keeps its basename.
    let row = text
        .lines()
        .find(|l| l.contains("closed, 0 taken"))
        .unwrap_or_else(|| panic!("no row of the running program: {text}"));
    assert!(
        row.contains("fake_cuda_app launch 5 sleep 1200"),
        "the program's name in its command: {text}"
    );
    // The dump's size against its budget (segments count: `a_live_dumps_size_counts_its_segments`).
    assert!(row.contains("MB/"), "size against the budget: {text}");
    assert!(
        !text.contains("WARNING"),
        "kernels in flight are no loss: {text}"
    );
    let window = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(["window"])
        .arg(dir.path())
        .args(["--for", "2s"])
        .output()
        .expect("window");
    let out = String::from_utf8_lossy(&window.stdout);
    let err = String::from_utf8_lossy(&window.stderr);
    assert_eq!(window.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("window open in 1 processes"), "{err}");
    assert!(out.contains("window-0.trace.json.gz"), "{out}");
    let w: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dump.join("window-0.json")).expect("window file"))
            .expect("json");
    let in_window = w["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "kernel")
        .count();
    assert_eq!(
        in_window, 7,
        "the 7 kernels launched while the window was open"
    );
    let code = run.wait().expect("wait").code();
    assert_eq!(code, Some(0));
    assert_eq!(kernels(&dump), 15);
}
