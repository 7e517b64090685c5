//! The end of a monitored process, end to end: the stand-in CUDA program (the
//! example `fake_cuda_app`) with this library preloaded and injected, as `cupmon
//! run` starts programs, and a one-hour flush period, so that only the flush at
//! the end can bring the records into the dump: `_exit`, `_Exit`, `_exit` in a
//! signal handler or a CUPTI client's callback, children made by `fork`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cupmon_trace::{decode_dump_to_window, WindowEvent};

/// target/<profile>, from this test binary's path (target/<profile>/deps/tests-*).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    exe.parent()
        .and_then(Path::parent)
        .expect("profile dir")
        .to_path_buf()
}

/// Build the example and the library once (same profile as this test).
fn app() -> &'static Path {
    static APP: OnceLock<PathBuf> = OnceLock::new();
    APP.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "--quiet", "-p", "cupmon-inject", "--lib"])
            .args(["--example", "fake_cuda_app", "--manifest-path"])
            .arg(&manifest);
        if target_dir().ends_with("release") {
            cmd.arg("--release");
        }
        assert!(cmd.status().expect("cargo build").success(), "build failed");
        target_dir().join("examples/fake_cuda_app")
    })
}

struct Ended {
    code: Option<i32>,
    stderr: String,
    took: Duration,
    dumps: Vec<PathBuf>,
    /// Holds the dumps until the test is done with them.
    _out: tempfile::TempDir,
}

/// Run the app with `steps`, preloaded and injected, killing it if it takes over a minute.
fn run(steps: &str) -> Ended {
    let app = app();
    let fake = cupmon_test_support::fake_library_path();
    let library = target_dir().join("libcupmon_inject.so");
    let out = tempfile::tempdir().expect("tempdir");
    let stderr_path = out.path().join("stderr");
    let dumps = out.path().join("dumps");
    let since = Instant::now();
    let mut child = Command::new(app)
        .args(steps.split_whitespace())
        .env("LD_PRELOAD", &library)
        .env("CUDA_INJECTION64_PATH", &library)
        .env("CUPMON_LIBCUPTI", fake)
        .env("CUPMON_LIBCUDA", fake)
        .env("CUPMON_OUTPUT_DIR", &dumps)
        .env("CUPMON_FLUSH_PERIOD", "1h")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("spawn the app");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if since.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{steps}` hung at its end");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = since.elapsed();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dumps)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    found.sort();
    eprintln!("`{steps}`: {status} after {took:?}");
    Ended {
        code: status.code(),
        stderr,
        took,
        dumps: found,
        _out: out,
    }
}

fn only_dump(ended: &Ended) -> &Path {
    assert_eq!(ended.dumps.len(), 1, "{:?}\n{}", ended.dumps, ended.stderr);
    &ended.dumps[0]
}

fn kernels(dump: &Path) -> usize {
    let (window, _) = decode_dump_to_window(dump, |_| {}).expect("decode");
    window
        .events
        .iter()
        .filter(|e| matches!(e, WindowEvent::Kernel(_)))
        .count()
}

/// The session's final meta was written (its counts are final).
fn closed(dump: &Path) -> bool {
    let meta =
        cupmon_records::MetaFile::read(dump.join(cupmon_records::dump::META_FILE)).expect("meta");
    !meta.session_open()
}

#[test]
fn regression_exit_and_upper_exit_lost_everything_since_the_last_flush() {
    for (exit, code) in [("_exit", 0), ("_Exit", 7), ("exit_in_handler", 3)] {
        let ended = run(&format!("launch 30 sleep 50 launch 20 {exit} {code}"));
        assert_eq!(ended.code, Some(code), "{exit}: {}", ended.stderr);
        let dump = only_dump(&ended);
        assert_eq!(kernels(dump), 50, "{exit}: every kernel is in the dump");
        assert!(closed(dump), "{exit}: the final meta is written");
    }
}

#[test]
fn children_made_by_fork_end_without_touching_the_parents_session() {
    // _exit, exit (the atexit hook) and SIGTERM in the child: each ended within
    // 3 s (the app checks), the parent was not ended by the child's SIGTERM.
    let ended = run("launch 10 fork_exit fork_return fork_sigterm launch 20 _exit 0");
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let dump = only_dump(&ended);
    assert_eq!(kernels(dump), 30);
    assert!(closed(dump));
}

#[test]
fn a_flush_that_cannot_end_holds_exit_up_a_few_seconds_only() {
    // Another CUPTI client's completion callback takes a minute: the stop cannot end.
    let ended = run("launch 10 slow_client 60000 launch 20 _exit 9");
    assert_eq!(ended.code, Some(9), "{}", ended.stderr);
    assert!(ended.took < Duration::from_secs(20), "{:?}", ended.took);
    assert!(
        ended
            .stderr
            .contains("the flush at _exit did not end within 5 s"),
        "{}",
        ended.stderr
    );
}

#[test]
fn exit_from_inside_the_stop_ends_the_process_without_waiting_for_itself() {
    // The client's completion callback calls _exit(5) while the exit flush hands it
    // the last records.
    let ended = run("launch 10 exiting_client 5 launch 20");
    assert_eq!(ended.code, Some(5), "{}", ended.stderr);
    assert!(ended.took < Duration::from_secs(20), "{:?}", ended.took);
    assert_eq!(kernels(only_dump(&ended)), 30);
}

#[test]
fn a_short_program_ends_promptly_under_a_one_hour_flush_period() {
    let ended = run("launch 10");
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    eprintln!(
        "a short program under CUPMON_FLUSH_PERIOD=1h ended after {:?}",
        ended.took
    );
    assert!(ended.took < Duration::from_secs(20), "{:?}", ended.took);
    assert_eq!(kernels(only_dump(&ended)), 10);
}
