//! The autograd engine's backward kernels given their forward op's Python line by
//! torch's sequence numbers (NVTX range names under `emit_nvtx`), end to end without
//! torch or a GPU: `tests/python/stacks/autograd_app.py` runs forward ops from marked
//! lines (`# FORWARD seq`) and a backward pass on a thread without Python frames
//! (`tests/nvtx/nvtx_autograd.c`) under `cupmon run` with the fake libcupti. Each
//! backward kernel must name its forward op's line as a backward (dump, `stats
//! --by-line`, the report, the decoded trace's args), and so must the gradient sums and
//! `AccumulateGrad` kernels the engine runs after the op's range; a number no forward op
//! carried (and what runs after that op) stays "no Python frames".

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cupmon_records::dump::LaunchStack;
use cupmon_records::{walk_records, Dump, KernelNames, Record};

use crate::nvtx::compiled;
use crate::python_stacks::first_python;
use crate::run_fake::{inject_library, only_dump};

fn app() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/stacks/autograd_app.py")
}

/// seq → the line marked `# FORWARD seq`.
fn forward_lines() -> HashMap<String, i32> {
    let text = std::fs::read_to_string(app()).expect("autograd_app.py");
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, seq)) = line.split_once("# FORWARD ") {
            out.insert(seq.trim().to_owned(), i as i32 + 1);
        }
    }
    assert_eq!(out.len(), 2, "{out:?}");
    out
}

fn cupmon(args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(args)
        .output()
        .expect("cupmon");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn backward_kernels_get_their_forward_line_by_sequence_number() {
    let Some((version, python)) = first_python() else {
        return;
    };
    let Some(engine) = compiled("nvtx_autograd", true) else {
        cupmon_test_skip::skipped!("no C compiler for tests/nvtx/nvtx_autograd.c");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let library = inject_library();
    let fake = cupmon_test_support::fake_library_path();
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("run")
        .arg("-o")
        .arg(dir.path())
        .arg("--")
        .arg(&python)
        .arg(app())
        .arg(&engine)
        .arg("2")
        .env("CUPMON_LIBCUPTI", fake)
        .env("CUPMON_LIBCUDA", fake)
        .env("CUPMON_INJECT_LIBRARY", &library)
        .env("CUDA_INJECTION64_PATH", &library)
        .env_remove("NVTX_INJECTION64_PATH")
        .output()
        .expect("cupmon run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump_dir = only_dump(dir.path());
    let dump = Dump::open(&dump_dir).expect("open");
    let table = dump.python_stacks();
    assert!(table.warnings().is_empty(), "{:?}", table.warnings());
    let forward = forward_lines();
    let mut names = KernelNames::new(dump.kernel_names());
    // kernel name → (backward?, line) of each of its kernels; None: no Python frames.
    let mut seen: HashMap<String, Vec<Option<(bool, i32)>>> = HashMap::new();
    walk_records(
        &dump,
        |_| {},
        |_, _, record| {
            if let Record::Kernel(k) = record {
                let name = names.name(k.name_ptr).0.to_owned();
                let at = match table.gpu_op(k.correlation_id, k.graph_node_id) {
                    Some(LaunchStack::Stack(id)) => {
                        let f = table.user_frame(id).expect("user frame");
                        assert!(f.file.ends_with("autograd_app.py"), "{name}: {f:?}");
                        Some((table.is_backward(id), f.line))
                    }
                    Some(LaunchStack::NoPython) => None,
                    None => panic!("{version}: {name} has no stack noted"),
                };
                seen.entry(name).or_default().push(at);
            }
        },
    )
    .expect("walk");
    let all = |name: &str| -> Vec<Option<(bool, i32)>> {
        seen.get(name)
            .unwrap_or_else(|| panic!("no {name} kernel: {seen:?}"))
            .clone()
    };
    // Two steps, two kernels per backward op.
    assert_eq!(
        all("bwd_100"),
        vec![Some((true, forward["100"])); 4],
        "{version}: the backward of seq 100 is the line of the last forward op with 100"
    );
    assert_eq!(
        all("bwd_101"),
        vec![Some((true, forward["101"])); 4],
        "{version}"
    );
    for seq in ["100", "101"] {
        for after in ["sum", "accumulate"] {
            assert_eq!(
                all(&format!("bwd_{seq}_{after}")),
                vec![Some((true, forward[seq])); 2],
                "{version}: the engine's {after} after the backward of seq {seq}"
            );
        }
    }
    assert_eq!(all("bwd_555"), vec![None; 4], "{version}: never seen");
    for after in ["sum", "accumulate"] {
        assert_eq!(
            all(&format!("bwd_555_{after}")),
            vec![None; 2],
            "{version}: after a backward op whose forward is unknown"
        );
    }
    assert_eq!(all("bwd_outside_ranges"), vec![None; 2], "{version}");
    assert_eq!(
        all("fwd_linear"),
        vec![Some((false, forward["100"])); 4],
        "{version}: the forward op's own kernels stay forward"
    );
    assert_eq!(
        all("fwd_relu"),
        vec![Some((false, forward["101"])); 2],
        "{version}"
    );
    let counted = &dump.meta().json()["autograd_backward_ops"];
    assert_eq!(counted["attributed"], 4, "{version}: {counted}");
    // Per step: the range of seq 555, and the inner op's inside it (no backward op
    // claimed the thread, so its number was looked up too).
    assert_eq!(counted["forward_not_seen"], 4, "{version}: {counted}");
    assert_eq!(counted["forward_overwritten"], 0, "{version}: {counted}");

    // stats --by-line: the backward a line of its own, beside its forward line.
    let stats = cupmon(&["stats".as_ref(), "--by-line".as_ref(), dump_dir.as_os_str()]);
    for seq in ["100", "101"] {
        let backward = format!("backward of {}:{} (", app().display(), forward[seq]);
        assert!(stats.contains(&backward), "{version}: {backward}\n{stats}");
    }
    assert!(
        stats.contains("launched from threads without Python frames"),
        "{stats}"
    );

    // The report's table: the backward row under its forward line's file and number.
    let page = dir.path().join("report.html");
    cupmon(&[
        "report".as_ref(),
        dump_dir.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    let html = std::fs::read_to_string(&page).expect("report.html");
    for seq in ["100", "101"] {
        let row = format!("backward of autograd_app.py:{} <span", forward[seq]);
        assert!(html.contains(&row), "{version}: {row}");
    }

    // The trace's args.
    let trace = dir.path().join("decoded.trace.json");
    cupmon(&[
        "decode".as_ref(),
        dump_dir.as_os_str(),
        "--format".as_ref(),
        "chrome".as_ref(),
        "-o".as_ref(),
        trace.as_os_str(),
    ]);
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).expect("trace")).expect("json");
    let mut bwd_lines: Vec<(String, String)> = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .filter_map(|e| {
            let name = e["name"].as_str()?;
            let line = e["args"]["source line"].as_str().unwrap_or("-");
            name.starts_with("bwd_1")
                .then(|| (name.to_owned(), line.to_owned()))
        })
        .collect();
    bwd_lines.sort();
    bwd_lines.dedup();
    let mut want: Vec<(String, String)> = ["100", "101"]
        .iter()
        .flat_map(|seq| {
            let line = format!("backward of {}:{}", app().display(), forward[*seq]);
            ["", "_accumulate", "_sum"].map(|after| (format!("bwd_{seq}{after}"), line.clone()))
        })
        .collect();
    want.sort();
    assert_eq!(bwd_lines, want, "{version}");
}
