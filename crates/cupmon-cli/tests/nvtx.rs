//! NVTX ranges under `cupmon run`, with no code change: a C program that calls NVTX
//! the way NVTX v3's headers do (`tests/nvtx/nvtx_app.c`: it loads
//! `NVTX_INJECTION64_PATH`, calls `InitializeInjectionNvtx2`, then calls through the
//! tables cupmon filled) launches kernels through the fake libcupti inside nested
//! ranges of two domains; the window, its trace and `stats` must put each kernel
//! under its innermost range.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::run_fake::{inject_library, only_dump};
use crate::util::read_json;

/// `tests/nvtx/NAME.c` compiled once with the system's C compiler (`-shared` for a
/// library); `None` (the test is SKIPPED) when there is none.
pub(crate) fn compiled(name: &str, shared: bool) -> Option<PathBuf> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/nvtx/{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(if shared {
        format!("lib{name}.so")
    } else {
        name.to_owned()
    });
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut command = Command::new(&cc);
    command.args(["-Wall", "-Werror", "-O1"]);
    if shared {
        command.args(["-shared", "-fPIC"]);
    }
    match command
        .arg("-o")
        .arg(&out)
        .arg(&source)
        .arg("-ldl")
        .status()
    {
        Ok(s) if s.success() => Some(out),
        Ok(s) => panic!("{cc} failed on {}: {s}", source.display()),
        Err(_) => None,
    }
}

/// The C program playing NVTX's calling side.
fn nvtx_app() -> Option<&'static Path> {
    static APP: OnceLock<Option<PathBuf>> = OnceLock::new();
    APP.get_or_init(|| compiled("nvtx_app", false)).as_deref()
}

fn run_app(dir: &Path, extra: &[&str], app: &Path, args: &[&str]) -> Output {
    let library = inject_library();
    Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("run")
        .arg("-o")
        .arg(dir)
        .args(extra)
        .arg("--")
        .arg(app)
        .args(args)
        .env("CUPMON_LIBCUPTI", cupmon_test_support::fake_library_path())
        .env("CUPMON_LIBCUDA", cupmon_test_support::fake_library_path())
        .env("CUPMON_INJECT_LIBRARY", library)
        .env_remove("NVTX_INJECTION64_PATH")
        .output()
        .expect("run cupmon")
}

const WINDOW: [&str; 4] = ["--window-at", "0", "--window-for", "60"];

/// Kernel name -> the range it was launched in, as the program arranges it.
const EXPECTED: [(&str, Option<&str>); 8] = [
    ("k_forward", Some("forward")),
    ("k_layer7", Some("layer 7")),
    ("k_backward", Some("backward")),
    ("k_optimizer", Some("optimizer")),
    ("k_inner", Some("inner")),
    ("k_none", None),
    ("k_handoff", Some("handoff")),
    ("k_after", None),
];

#[test]
fn nvtx_ranges_of_a_c_program_become_annotations_over_their_kernels() {
    let Some(app) = nvtx_app() else {
        cupmon_test_skip::skipped!("no C compiler (cc, or $CC) to build tests/nvtx/nvtx_app.c");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run_app(dir.path(), &WINDOW, app, &["1"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    // What NVTX's calls returned: levels per domain, -1 for a pop with nothing open.
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "push forward 0",
            "push layer7 0",
            "pop layer7 0",
            "pop forward 0",
            "push backward 0",
            "pop backward 0",
            "start optimizer 1",
            "push outer 0",
            "push inner 0",
            "pop outer 0",
            "pop inner 0",
            "pop nothing -1",
            "push left open 0",
        ],
        "{stderr}"
    );
    let dump = only_dump(dir.path());
    crate::nvtx_cpu::check_cpu_ranges_and_marks(dir.path(), &dump);

    // The window: each kernel's launch correlates with its innermost range's id.
    let window = read_json(&dump.join("window-0.json"));
    let names: BTreeMap<String, String> = window["user_annotations"]
        .as_object()
        .expect("user_annotations")
        .iter()
        .map(|(id, name)| (id.clone(), name.as_str().expect("name").to_owned()))
        .collect();
    let events = window["events"].as_array().expect("events");
    let range_of_correlation: BTreeMap<u64, String> = events
        .iter()
        .filter(|e| e["kind"] == "external_correlation" && e["external_kind"] == 4)
        .map(|e| {
            let id = e["external_id"].as_u64().expect("id").to_string();
            (
                e["correlation_id"].as_u64().expect("correlation"),
                names
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| panic!("id {id} unnamed")),
            )
        })
        .collect();
    let kernels: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["kind"] == "kernel").collect();
    assert_eq!(kernels.len(), 15, "every kernel is in the window");
    for kernel in &kernels {
        let name = kernel["name"].as_str().expect("kernel name");
        let range = range_of_correlation.get(&kernel["correlation_id"].as_u64().expect("corr"));
        let expected = EXPECTED
            .iter()
            .find(|(k, _)| *k == name)
            .expect("known kernel")
            .1;
        assert_eq!(range.map(String::as_str), expected, "kernel {name}");
    }
    // "outer" was pushed and named, but ran no GPU work of its own.
    assert!(names.values().any(|n| n == "outer"), "{names:?}");

    // The trace cupmon run made: one gpu_user_annotation span per range with GPU work.
    let trace = read_json(&dump.join("window-0.trace.json.gz"));
    let mut spans: Vec<&str> = trace["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["cat"] == "gpu_user_annotation")
        .map(|e| e["name"].as_str().expect("span name"))
        .collect();
    spans.sort_unstable();
    assert_eq!(
        spans,
        [
            "backward",
            "forward",
            "handoff",
            "inner",
            "layer 7",
            "optimizer"
        ]
    );
    // Each span lies over the kernels of its range: every kernel launched in a range
    // runs within a span of that range's name.
    let trace_events = trace["traceEvents"].as_array().expect("traceEvents");
    let time = |e: &serde_json::Value| {
        let ts = e["ts"].as_f64().expect("ts");
        (ts, ts + e["dur"].as_f64().expect("dur"))
    };
    let mut kernels_in_trace = 0;
    for kernel in trace_events.iter().filter(|e| e["cat"] == "kernel") {
        kernels_in_trace += 1;
        let name = kernel["name"].as_str().expect("kernel name");
        let Some(range) = EXPECTED
            .iter()
            .find(|(k, _)| *k == name)
            .expect("known kernel")
            .1
        else {
            continue;
        };
        let (start, end) = time(kernel);
        assert!(
            trace_events
                .iter()
                .filter(|span| span["cat"] == "gpu_user_annotation" && span["name"] == range)
                .any(|span| {
                    let (from, to) = time(span);
                    from <= start + 1e-3 && end <= to + 1e-3
                }),
            "kernel {name} ({start}..{end} µs) is under no span {range}"
        );
    }
    assert_eq!(kernels_in_trace, 15);
    // A trace made from the dump afterwards has them too.
    let decoded = dir.path().join("decoded.trace.json.gz");
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("decode")
        .arg(&dump)
        .arg("-o")
        .arg(&decoded)
        .output()
        .expect("decode");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut from_dump: Vec<String> = read_json(&decoded)["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["cat"] == "gpu_user_annotation")
        .map(|e| e["name"].as_str().expect("span name").to_owned())
        .collect();
    from_dump.sort_unstable();
    assert_eq!(from_dump, spans);
    crate::nvtx_cpu::check_same_cpu_annotations(
        &read_json(&dump.join("window-0.trace.json.gz")),
        &read_json(&decoded),
    );

    // `stats --by-range`: kernels per range name, the rest outside any range.
    assert_eq!(
        stats_by_range(&dump),
        [
            ("backward", 4),
            ("forward", 3),
            ("inner", 2),
            ("layer 7", 2),
            ("handoff", 1),
            ("optimizer", 1),
            ("(outside any range)", 2),
        ]
        .map(|(n, k)| (n.to_owned(), k))
    );

    // `report`: the same table, from the window's span.
    let page = dir.path().join("report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("report")
        .arg(&dump)
        .arg("-o")
        .arg(&page)
        .output()
        .expect("report");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("report.html");
    let table = html
        .split_once("<table id=\"ranges\">")
        .expect("a range table")
        .1
        .split_once("</table>")
        .expect("its end")
        .0;
    let rows: Vec<&str> = table
        .split("<tr><td class=\"name\">")
        .skip(1)
        .map(|row| row.split_once('<').expect("name").0)
        .collect();
    assert_eq!(
        rows,
        [
            "backward",
            "forward",
            "inner",
            "layer 7",
            "handoff",
            "optimizer"
        ]
    );

    // `export-parquet`: each kernel row names its range.
    let parquet = dir.path().join("parquet");
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("export-parquet")
        .arg(&dump)
        .arg("-o")
        .arg(&parquet)
        .output()
        .expect("export-parquet");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = kernel_rows(&parquet.join("kernels"));
    assert_eq!(rows.len(), 15);
    for (kernel, range) in rows {
        let expected = EXPECTED
            .iter()
            .find(|(k, _)| *k == kernel)
            .expect("known kernel")
            .1;
        assert_eq!(range.as_deref(), expected, "kernel {kernel}");
    }
}

/// `cupmon stats DUMP --by-range`: (range, kernels) per row, in the table's order.
fn stats_by_range(dump: &Path) -> Vec<(String, u64)> {
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("stats")
        .arg(dump)
        .arg("--by-range")
        .output()
        .expect("stats");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = stdout
        .split_once("GPU time by range")
        .unwrap_or_else(|| panic!("no range table: {stdout}"))
        .1;
    table
        .lines()
        .skip(2)
        .map(|line| {
            // The name, then instances (none for the last row) and four numbers.
            let words: Vec<&str> = line.split_whitespace().collect();
            let n = words.len();
            let name_words = if line.contains("(outside any range)") {
                n - 4
            } else {
                n - 5
            };
            let kernels = words[n - 4].parse().unwrap_or_else(|_| panic!("{line}"));
            (words[..name_words].join(" "), kernels)
        })
        .collect()
}

/// (kernel name, user_annotation) of every row of the kernels dataset under `dir`.
fn kernel_rows(dir: &Path) -> Vec<(String, Option<String>)> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                pending.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                files.push(p);
            }
        }
    }
    let mut rows = Vec::new();
    for f in files {
        let file = std::fs::File::open(&f).expect("open");
        let reader = SerializedFileReader::new(file).expect("parquet");
        for row in reader.get_row_iter(None).expect("rows") {
            let row = row.expect("row");
            let mut name = String::new();
            let mut range = None;
            for (column, field) in row.get_column_iter() {
                match (column.as_str(), field) {
                    ("name", Field::Str(s)) => name = s.clone(),
                    ("user_annotation", Field::Str(s)) => range = Some(s.clone()),
                    _ => {}
                }
            }
            rows.push((name, range));
        }
    }
    rows
}

#[test]
fn a_user_set_nvtx_injection_path_is_kept_and_said_once() {
    let Some(app) = nvtx_app() else {
        cupmon_test_skip::skipped!("no C compiler (cc, or $CC) to build tests/nvtx/nvtx_app.c");
        return;
    };
    let Some(other) = compiled("other_tool", true) else {
        cupmon_test_skip::skipped!("no C compiler (cc, or $CC) to build tests/nvtx/other_tool.c");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("out");
    let mut command = Command::new(env!("CARGO_BIN_EXE_cupmon"));
    command
        .arg("run")
        .arg("-o")
        .arg(&out_dir)
        .arg("--")
        .arg(app)
        .env("CUPMON_LIBCUPTI", cupmon_test_support::fake_library_path())
        .env("CUPMON_LIBCUDA", cupmon_test_support::fake_library_path())
        .env("CUPMON_INJECT_LIBRARY", inject_library())
        .env("NVTX_INJECTION64_PATH", &other);
    let out = command.output().expect("run cupmon");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    // The other tool took NVTX: it handles no call, so the app's calls found no function.
    assert!(stdout.starts_with("push forward -9\n"), "{stdout}");
    let said = format!("NVTX_INJECTION64_PATH is set ({})", other.display());
    assert_eq!(stderr.matches(&said).count(), 1, "{stderr}");
}
