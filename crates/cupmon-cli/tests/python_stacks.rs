//! Which line of Python launched each kernel, end to end without a GPU: a Python
//! program (`tests/python/stacks/stacks_app.py`) launches through the fake libcupti
//! from lines marked `# LAUNCH name` (ctypes releases the GIL around each call, as torch
//! does before it launches), under `cupmon run`; every kernel and memset of the dump
//! must name its marked line, the kernels of a CUDA graph's replays the line that
//! captured their node (not the replay's). Run with each CPython 3.11+ found (python3, and pyenv's
//! 3.11-3.13 when installed), SKIPPED when there is none.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cupmon_records::dump::{
    parse_launch_stacks_file_name, LaunchStack, LAUNCH_STACKS_FILE, PYTHON_STACKS_FILE,
    SEGMENTS_DIR,
};
use cupmon_records::{walk_records, Dump, KernelNames, Record};

use crate::run_fake::{inject_library, only_dump};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn app() -> PathBuf {
    repo().join("tests/python/stacks/stacks_app.py")
}

/// `name` → the line marked `# LAUNCH name`.
fn markers() -> HashMap<String, i32> {
    let text = std::fs::read_to_string(app()).expect("stacks_app.py");
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, name)) = line.split_once("# LAUNCH ") {
            out.insert(name.trim().to_owned(), i as i32 + 1);
        }
    }
    assert!(out.len() >= 6, "{out:?}");
    out
}

/// CPython 3.11 or later: `python3`, and pyenv's installed 3.11-3.13.
pub(crate) fn pythons() -> Vec<(String, PathBuf)> {
    pythons_of(11..=13)
}

/// The first CPython 3.11+ found; `None`, and the test said SKIPPED, when there is none.
pub(crate) fn first_python() -> Option<(String, PathBuf)> {
    let first = pythons().into_iter().next();
    if first.is_none() {
        cupmon_test_skip::skipped!("no CPython 3.11-3.13 (python3 or pyenv) to run the app");
    }
    first
}

/// The CPythons `3.x` for x in `minors` found.
fn pythons_of(minors: std::ops::RangeInclusive<u32>) -> Vec<(String, PathBuf)> {
    let mut candidates = vec![PathBuf::from("python3")];
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")));
    if let Some(Ok(versions)) = pyenv.map(|p| std::fs::read_dir(p.join("versions"))) {
        let mut found: Vec<PathBuf> = versions
            .flatten()
            .map(|e| e.path().join("bin/python3"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        candidates.extend(found);
    }
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for python in candidates {
        let Ok(o) = Command::new(&python)
            .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
            .output()
        else {
            continue;
        };
        let version = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        let minor: u32 = version
            .strip_prefix("3.")
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        if o.status.success() && minors.contains(&minor) && !out.iter().any(|(v, _)| *v == version)
        {
            out.push((version, python));
        }
    }
    out
}

fn run(python: &Path, dir: &Path, env: &[(&str, &str)]) -> Output {
    run_with(python, dir, &[], &["3"], env)
}

/// `cupmon run -o DIR EXTRA -- PYTHON stacks_app.py APP_ARGS`.
fn run_with(
    python: &Path,
    dir: &Path,
    extra: &[&str],
    app_args: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let library = inject_library();
    let fake = cupmon_test_support::fake_library_path();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cupmon"));
    command
        .arg("run")
        .arg("-o")
        .arg(dir)
        .args(extra)
        .arg("--")
        .arg(python)
        .arg(app())
        .args(app_args)
        .env("CUPMON_LIBCUPTI", fake.as_os_str())
        .env("CUPMON_LIBCUDA", fake)
        .env("CUPMON_INJECT_LIBRARY", &library)
        .env("CUDA_INJECTION64_PATH", &library);
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().expect("cupmon run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stats_by_line(dump: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(["stats", "--by-line"])
        .arg(dump)
        .output()
        .expect("cupmon stats");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_kernel_and_memset_names_the_python_line_that_launched_it() {
    let pythons = pythons();
    if pythons.is_empty() {
        cupmon_test_skip::skipped!("no CPython 3.11-3.13 (python3 or pyenv) to run the app");
        return;
    }
    let marks = markers();
    for (version, python) in &pythons {
        let dir = tempfile::tempdir().expect("tempdir");
        run(python, dir.path(), &[]);
        let dump_dir = only_dump(dir.path());
        let dump = Dump::open(&dump_dir).expect("open");
        let table = dump.python_stacks();
        assert!(
            table.warnings().is_empty(),
            "{version}: {:?}",
            table.warnings()
        );
        let mut seen: HashMap<String, u32> = HashMap::new();
        let checked = |what: String, corr: u32, node: u64| {
            let expected = marks[&what];
            let Some(LaunchStack::Stack(id)) = table.gpu_op(corr, node) else {
                panic!("{version}: {what} (correlation {corr}) has no stack");
            };
            let frame = table.user_frame(id).expect("user frame");
            assert!(
                frame.file.ends_with("stacks_app.py"),
                "{version}: {frame:?}"
            );
            assert_eq!(frame.line, expected, "{version}: {what}: {frame:?}");
            let (frames, truncated) = table.frames(id).expect("frames");
            if what == "fake_gemm_kernel" {
                // The "torch" op's own frame is innermost, marked as a library's.
                assert_eq!(frames[0].origin.as_deref(), Some("torch"), "{frames:?}");
                assert!(frames[0].file.ends_with("torch/fake_ops.py"));
            }
            assert_eq!(truncated, what == "deep_kernel", "{version}: {what}");
            *seen.entry(what).or_default() += 1;
        };
        each_gpu_op(&dump, checked);
        assert_eq!(seen, ops_per_name(), "{version}");
        // The worker joined every one of them (none lost from the ring).
        let joined = &dump.meta().json()["python_stack_records"];
        assert_eq!(joined["attributed"], 36, "{version}: {joined}");
        assert_eq!(joined["unattributed"], 0, "{version}: {joined}");
        let stats = stats_by_line(&dump_dir);
        let attn = format!("stacks_app.py:{} (attention)", marks["attn_kernel"]);
        assert!(stats.contains(&attn), "{version}: {stats}");
        let page = dir.path().join("report.html");
        let status = Command::new(env!("CARGO_BIN_EXE_cupmon"))
            .arg("report")
            .arg(&dump_dir)
            .arg("-o")
            .arg(&page)
            .status()
            .expect("cupmon report");
        assert!(status.success());
        let html = std::fs::read_to_string(&page).expect("report.html");
        assert!(html.contains("Top source lines by GPU time"), "{version}");
        let graph = format!(
            "stacks_app.py:{} <span class=\"note\">capture_graph",
            marks["graph_kernel"]
        );
        assert!(
            html.contains(&graph),
            "{version}: the graph's kernels under their capture line"
        );
        eprintln!("python stacks checked with CPython {version}");
    }
}

/// Calls `f(kernel name or "memset", correlation id, graph node id)` for each kernel and
/// memset of the dump.
fn each_gpu_op(dump: &Dump, mut f: impl FnMut(String, u32, u64)) {
    let mut names = KernelNames::new(dump.kernel_names());
    walk_records(
        dump,
        |_| {},
        |_, _, record| match record {
            Record::Kernel(k) => f(
                names.name(k.name_ptr).0.to_owned(),
                k.correlation_id,
                k.graph_node_id,
            ),
            Record::Memset(m) => f("memset".to_owned(), m.correlation_id, 0),
            _ => {}
        },
    )
    .expect("walk");
}

/// The dump holds a stack table or a launch-stack file (raw or per segment).
fn has_stack_files(dump_dir: &Path) -> bool {
    dump_dir.join(PYTHON_STACKS_FILE).exists()
        || dump_dir.join(LAUNCH_STACKS_FILE).exists()
        || std::fs::read_dir(dump_dir.join(SEGMENTS_DIR))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_str()
                    .and_then(parse_launch_stacks_file_name)
                    .is_some()
            })
}

#[test]
fn with_python_stacks_off_nothing_is_noted_and_stats_says_so() {
    let Some((_, python)) = first_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    run(&python, dir.path(), &[("CUPMON_PYTHON_STACKS", "0")]);
    let dump_dir = only_dump(dir.path());
    assert!(!has_stack_files(&dump_dir));
    let stats = stats_by_line(&dump_dir);
    assert!(stats.contains("this dump has no Python stacks"), "{stats}");
    assert!(stats.contains("CUPMON_PYTHON_STACKS=0"), "{stats}");
}

#[test]
fn a_python_the_walker_does_not_know_runs_unattributed_and_says_why() {
    let Some((version, python)) = pythons_of(6..=10).into_iter().last() else {
        cupmon_test_skip::skipped!("no CPython 3.6-3.10 (pyenv) to run the app with");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(&python, dir.path(), &[]);
    let dump_dir = only_dump(dir.path());
    assert!(!has_stack_files(&dump_dir), "{version}");
    let dump = Dump::open(&dump_dir).expect("open");
    let said = dump.meta().json()["python_stacks"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        said.starts_with("off: no CPython 3.11 or later"),
        "{version}: {said}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panic"),
        "{version}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every GPU op of a Chrome trace: (name or "memset", its `source line` arg).
fn gpu_ops_lines(trace: &serde_json::Value) -> Vec<(String, Option<String>)> {
    trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter_map(|e| {
            let name = match e["cat"].as_str()? {
                "kernel" => e["name"].as_str()?.to_owned(),
                "gpu_memset" => "memset".to_owned(),
                _ => return None,
            };
            Some((name, e["args"]["source line"].as_str().map(str::to_owned)))
        })
        .collect()
}

/// GPU ops per kernel name ("memset" for memsets) that one run of the app launches.
fn ops_per_name() -> HashMap<String, u32> {
    [
        ("attn_kernel", 9),
        ("fake_gemm_kernel", 6),
        ("memset", 6),
        ("thread_kernel", 4),
        ("deep_kernel", 1),
        ("gen_kernel", 2),
        ("graph_kernel", 8),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_owned(), n))
    .collect()
}

fn check_lines(what: &str, ops: &[(String, Option<String>)]) {
    let marks = markers();
    assert_eq!(ops.len(), 36, "{what}: {ops:?}");
    let mut per_name: HashMap<String, u32> = HashMap::new();
    for (name, _) in ops {
        *per_name.entry(name.clone()).or_default() += 1;
    }
    assert_eq!(per_name, ops_per_name(), "{what}");
    for (name, line) in ops {
        let want = format!("stacks_app.py:{}", marks[name]);
        assert!(
            line.as_deref().is_some_and(|l| l.ends_with(&want)),
            "{what}: {name}: {line:?}, expected {want}"
        );
    }
}

#[test]
fn the_window_trace_and_decode_give_each_gpu_op_its_source_line() {
    let Some((_, python)) = first_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    // Launches 1 s after the start, inside a window opened at 0.1 s.
    run_with(
        &python,
        dir.path(),
        &["--window-at", "0.1", "--window-for", "60"],
        &["3", "1"],
        &[],
    );
    let dump_dir = only_dump(dir.path());
    let gz = std::fs::File::open(dump_dir.join("window-0.trace.json.gz")).expect("window trace");
    let window: serde_json::Value =
        serde_json::from_reader(flate2::read::GzDecoder::new(gz)).expect("window trace json");
    check_lines("window trace", &gpu_ops_lines(&window));
    // Each launch's stack as Kineto's python_function events over the launch call.
    let frames: Vec<&str> = window["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["cat"] == "python_function")
        .filter_map(|e| e["name"].as_str())
        .collect();
    let attention = format!("stacks_app.py({}): attention", markers()["attn_kernel"]);
    let n = frames.iter().filter(|f| f.ends_with(&attention)).count();
    assert_eq!(n, 9, "one per attention launch (3 steps of 3): {frames:?}");
    let out = dir.path().join("decoded.trace.json");
    let status = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("decode")
        .arg(&dump_dir)
        .args(["--format", "chrome", "-o"])
        .arg(&out)
        .status()
        .expect("cupmon decode");
    assert!(status.success());
    let decoded: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("decoded")).expect("json");
    check_lines("decode --format chrome", &gpu_ops_lines(&decoded));
}

#[test]
fn a_depth_setting_keeps_the_innermost_frames_and_every_line() {
    let Some((version, python)) = first_python() else {
        return;
    };
    let marks = markers();
    let dir = tempfile::tempdir().expect("tempdir");
    run(&python, dir.path(), &[("CUPMON_PYTHON_STACK_DEPTH", "3")]);
    let dump_dir = only_dump(dir.path());
    let dump = Dump::open(&dump_dir).expect("open");
    assert_eq!(dump.meta().json()["python_stack_depth"], 3, "{version}");
    let table = dump.python_stacks();
    let mut cut: HashMap<String, bool> = HashMap::new();
    let check = |what: String, corr: u32, node: u64| {
        let Some(LaunchStack::Stack(id)) = table.gpu_op(corr, node) else {
            panic!("{version}: {what} (correlation {corr}) has no stack");
        };
        let (frames, truncated) = table.frames(id).expect("frames");
        assert!(frames.len() <= 3, "{version}: {what}: {frames:?}");
        assert!(
            !truncated || frames.len() == 3,
            "{version}: {what}: cut short of 3"
        );
        // The line that launched it is among the innermost three: nothing lost there.
        let frame = table.user_frame(id).expect("user frame");
        assert_eq!(frame.line, marks[&what], "{version}: {what}: {frame:?}");
        *cut.entry(what).or_default() |= truncated;
    };
    each_gpu_op(&dump, check);
    // 150 calls deep: cut to its innermost 3; attention's own 3 frames: whole.
    assert_eq!(cut.get("deep_kernel"), Some(&true), "{version}: {cut:?}");
    assert_eq!(cut.get("attn_kernel"), Some(&false), "{version}: {cut:?}");
    assert_eq!(cut.len(), ops_per_name().len(), "{version}: {cut:?}");
}

/// Runs the app with `env` and returns its dump (with the directory that holds it).
fn run_dump(python: &Path, env: &[(&str, &str)]) -> (tempfile::TempDir, Dump) {
    let dir = tempfile::tempdir().expect("tempdir");
    run(python, dir.path(), env);
    let dump = Dump::open(only_dump(dir.path())).expect("open");
    (dir, dump)
}

/// Runs the app with `env` and returns its dump's meta.
fn run_meta(python: &Path, env: &[(&str, &str)]) -> serde_json::Map<String, serde_json::Value> {
    run_dump(python, env).1.meta().json().clone()
}

#[test]
fn stack_timing_puts_the_cost_of_each_read_in_the_meta_only_when_asked() {
    let Some((version, python)) = first_python() else {
        return;
    };
    let timed = run_meta(&python, &[("CUPMON_PYTHON_STACK_TIMING", "1")]);
    let t = &timed["python_stack_timing"];
    // Each launch call of the app (kernels, memsets, the capture), and none for the
    // graph's replays: their kernels carry the captured nodes' stacks.
    let reads = t["reads"].as_u64().expect("reads");
    assert!((20..=100).contains(&reads), "{version}: {t}");
    let ns = t["ns_per_read"].as_f64().expect("ns_per_read");
    // A read of a few frames, and a 150-deep one: more than nothing, far less than 1 ms.
    assert!(ns > 0.0 && ns < 1e6, "{version}: {t}");
    let (_dir, replayed) = run_dump(
        &python,
        &[
            ("CUPMON_PYTHON_STACK_TIMING", "1"),
            ("STACKS_APP_REPLAYS", "40"),
        ],
    );
    let meta = replayed.meta().json();
    let more = &meta["python_stack_timing"];
    assert_eq!(
        more["reads"].as_u64(),
        Some(reads),
        "{version}: 36 more replays read stacks ({t} with 4, {more} with 40)"
    );
    // Every replay's kernels still name the capture's line: 40 replays of the app's two
    // captured kernels.
    let table = replayed.python_stacks();
    let capture_line = markers()["graph_kernel"];
    let mut on_capture_line = 0;
    each_gpu_op(&replayed, |name, corr, node| {
        if name == "graph_kernel" {
            let line = match table.gpu_op(corr, node) {
                Some(LaunchStack::Stack(id)) => table.user_frame(id).map(|f| f.line),
                _ => None,
            };
            assert_eq!(line, Some(capture_line), "{version}: correlation {corr}");
            on_capture_line += 1;
        }
    });
    assert_eq!(on_capture_line, 40 * 2, "{version}");
    let joined = &meta["python_stack_records"];
    assert_eq!(joined["unattributed"], 0, "{version}: {joined}");
    assert!(
        run_meta(&python, &[]).get("python_stack_timing").is_none(),
        "{version}: timed without being asked"
    );
}
