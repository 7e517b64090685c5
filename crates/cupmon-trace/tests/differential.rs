//! Differential tests: cupmon's merge against PyTorch's merge's own code
//! (`../shared/reference/seed_merge.py`, the specification) on generated
//! windows and CPU traces that exercise every rule of the merge, including
//! the inputs PyTorch's merge rejects. Skipped, with a message, where the oracle or
//! python3 is not available.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::compare::trace_differences;
use cupmon_trace::{merge_files, MergeOptions, MergeWindow, WindowSource};

fn oracle_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference");
    let ok = dir.join("seed_merge.py").is_file()
        && Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    ok.then_some(dir)
}

fn batch_driver() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle_batch.py")
}

fn load(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).expect("read output");
    let text = if path.to_string_lossy().ends_with(".gz") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut s)
            .expect("gunzip");
        s
    } else {
        String::from_utf8(bytes).expect("utf8")
    };
    serde_json::from_str(&quote_non_finite(&text)).expect("output is JSON")
}

/// serde_json rejects Python's NaN/Infinity literals: turn them into strings
/// (outside string literals) so both sides compare alike.
fn quote_non_finite(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else {
            let word = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|w| rest.starts_with(w));
            if let Some(w) = word {
                out.push('"');
                out.push_str(w);
                out.push('"');
                rest = &rest[w.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Run the oracle on every case in one Python process, then cupmon on each, and compare.
fn run_cases(cases: &[super::gen::Case], dir: &Path) {
    let Some(oracle) = oracle_dir() else {
        cupmon_test_skip::skipped!(
            "no oracle: ../shared/reference/seed_merge.py (PyTorch's merge_trace_window_into_chrome_trace) or python3 not found"
        );
        return;
    };
    let mut list = String::new();
    for (i, case) in cases.iter().enumerate() {
        let base = dir.join(format!("case{i}"));
        std::fs::create_dir_all(&base).expect("mkdir");
        let cpu = base.join(if case.cpu_gz {
            "cpu.json.gz"
        } else {
            "cpu.json"
        });
        write_maybe_gz(&cpu, case.cpu.as_bytes());
        std::fs::write(base.join("window.json"), &case.window).expect("write window");
        let line = serde_json::json!({
            "cpu": cpu, "window": base.join("window.json"),
            "out": base.join(if case.out_gz { "pytorch.json.gz" } else { "pytorch.json" }),
            "trace_name": case.trace_name,
        });
        list.push_str(&line.to_string());
        list.push('\n');
    }
    let list_path = dir.join("cases.jsonl");
    std::fs::write(&list_path, list).expect("write list");
    let status = Command::new("python3")
        .arg(batch_driver())
        .arg(&oracle)
        .arg(&list_path)
        .status()
        .expect("run python3");
    assert!(status.success(), "oracle driver failed");
    let mut failures = Vec::new();
    let mut both_rejected = 0;
    for (i, case) in cases.iter().enumerate() {
        let base = dir.join(format!("case{i}"));
        let suffix = if case.out_gz { ".json.gz" } else { ".json" };
        let pytorch_out = base.join(format!("pytorch{suffix}"));
        let pytorch_error = std::fs::read_to_string(base.join("pytorch.error")).ok();
        let ours = base.join(format!("ours{suffix}"));
        let cpu = base.join(if case.cpu_gz {
            "cpu.json.gz"
        } else {
            "cpu.json"
        });
        let result = MergeWindow::from_json(case.window.as_bytes(), "window.json").and_then(|w| {
            merge_files(
                &cpu,
                WindowSource::Loaded(&w),
                &ours,
                &MergeOptions {
                    trace_name: case.trace_name.clone(),
                    exact: true,
                    ..MergeOptions::default()
                },
                &mut |_| {},
            )
        });
        match (pytorch_error, result) {
            (Some(_), Err(_)) => both_rejected += 1,
            (Some(e), Ok(_)) => failures.push(format!(
                "case {i} ({}): PyTorch's merge raised {e} but cupmon merged",
                case.label
            )),
            (None, Err(e)) => failures.push(format!(
                "case {i} ({}): PyTorch's merge succeeded but cupmon failed: {e}",
                case.label
            )),
            (None, Ok(_)) => {
                let mut expected = load(&pytorch_out);
                let mut actual = load(&ours);
                if case.trace_name.is_none() {
                    // The default name is the output path, which differs by design here.
                    expected.as_object_mut().map(|o| o.remove("traceName"));
                    actual.as_object_mut().map(|o| o.remove("traceName"));
                }
                let diffs = trace_differences(&expected, &actual, 5);
                if !diffs.is_empty() {
                    failures.push(format!(
                        "case {i} ({}) in {}:\n  {}",
                        case.label,
                        base.display(),
                        diffs.join("\n  ")
                    ));
                }
            }
        }
        if !failures.is_empty() && failures.len() >= 5 {
            break;
        }
    }
    if !failures.is_empty() {
        // Keep the cases for inspection.
        let keep = std::env::temp_dir().join("cupmon-differential-failures");
        let _ = std::fs::remove_dir_all(&keep);
        let _ = Command::new("cp").arg("-r").arg(dir).arg(&keep).status();
        panic!(
            "{} mismatches (cases kept in {}):\n{}",
            failures.len(),
            keep.display(),
            failures.join("\n")
        );
    }
    eprintln!(
        "differential: {} cases agree with PyTorch's merge ({} merged identically, {both_rejected} rejected by both)",
        cases.len(),
        cases.len() - both_rejected
    );
}

fn write_maybe_gz(path: &Path, bytes: &[u8]) {
    if path.to_string_lossy().ends_with(".gz") {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, bytes).expect("gzip");
        std::fs::write(path, enc.finish().expect("gzip")).expect("write");
    } else {
        std::fs::write(path, bytes).expect("write");
    }
}

#[test]
fn generated_windows_merge_as_the_seed_merges_them() {
    let n: u64 = std::env::var("CUPMON_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let cases: Vec<super::gen::Case> = (0..n).map(super::gen::case).collect();
    let dir = tempfile::tempdir().expect("tempdir");
    run_cases(&cases, dir.path());
}

#[test]
fn hand_written_edge_cases_merge_as_the_seed_merges_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    run_cases(&super::gen::edge_cases(), dir.path());
}

/// Was 27 s (quadratic duplicate-key handling); PyTorch's merge takes 0.26 s.
#[test]
fn window_with_200k_annotations_merges_like_pytorch() {
    let dir = tempfile::tempdir().expect("tempdir");
    run_cases(&[super::gen::many_annotations(200_000)], dir.path());
}

/// Was 9.4 s (quadratic top-level member handling).
#[test]
fn cpu_trace_with_100k_top_level_keys_merges_like_pytorch() {
    let dir = tempfile::tempdir().expect("tempdir");
    run_cases(&[super::gen::many_top_level_keys(100_000)], dir.path());
}
