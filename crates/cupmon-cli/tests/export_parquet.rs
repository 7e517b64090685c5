//! `cupmon export-parquet` and `cupmon sql` as a user runs them: a run directory of
//! dumps in, datasets out with a summary; bad input refused with exit code 2 and a
//! line saying what to do; `cupmon sql` saying how to get DuckDB when it is missing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cupmon(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(args)
        .output()
        .expect("run cupmon")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(name)
}

/// A `cupmon run`-like output directory holding both fixtures as ranks 0 and 1.
fn run_dir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (rank, name) in [(0, "cuda_workload"), (1, "torch_mlp")] {
        let dir = tmp.path().join(format!("rank{rank}-{}", 100 + rank));
        std::fs::create_dir_all(&dir).unwrap();
        for f in std::fs::read_dir(fixture(name)).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
        }
    }
    tmp
}

fn bad_input(out: &Output, mentions: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    for m in mentions {
        assert!(stderr.contains(m), "{m:?} not in {stderr}");
    }
}

#[test]
fn a_run_directory_becomes_datasets_with_a_summary() {
    let run = run_dir();
    let out = run.path().join("fleet");
    let o = cupmon(&[
        "export-parquet",
        &run.path().display().to_string(),
        "-o",
        &out.display().to_string(),
        "--job",
        "j1",
        "--host",
        "node3",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("exported 2 dumps into"), "{stdout}");
    assert!(stdout.contains("kernels"), "{stdout}");
    assert!(stdout.contains("B/row"), "{stdout}");
    assert!(stdout.contains("cupmon sql"), "{stdout}");
    // Ranks from the directory names: rank0-100, rank1-101.
    assert!(out
        .join("kernels/day=2026-11-29/hour=19/node3.r0.p456.0000000000.parquet")
        .is_file());
    assert!(out
        .join("kernels/day=2026-11-29/hour=19/node3.r1.p466.0000000000.parquet")
        .is_file());
    assert!(out.join("cupmon.sql").is_file());
    // Again: nothing new.
    let o = cupmon(&[
        "export-parquet",
        &run.path().display().to_string(),
        "-o",
        &out.display().to_string(),
        "--host",
        "node3",
    ]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("nothing new"));
}

#[test]
fn bad_arguments_and_inputs_are_refused_with_exit_code_2() {
    let run = run_dir();
    let out = run.path().join("fleet").display().to_string();
    let dump = run.path().join("rank0-100").display().to_string();
    bad_input(
        &cupmon(&["export-parquet", "/nonexistent/dump", "-o", &out]),
        &["/nonexistent/dump", "no such dump directory"],
    );
    let empty = tempfile::tempdir().unwrap();
    bad_input(
        &cupmon(&[
            "export-parquet",
            &empty.path().display().to_string(),
            "-o",
            &out,
        ]),
        &["neither a dump", "nor a `cupmon run` output directory"],
    );
    bad_input(
        &cupmon(&["export-parquet", &dump, "-o", &out, "--from", "yesterday"]),
        &["yesterday", "@UNIX_SECONDS", "HH:MM:SS"],
    );
    bad_input(
        &cupmon(&[
            "export-parquet",
            &dump,
            "-o",
            &out,
            "--from",
            "@20",
            "--to",
            "@10",
        ]),
        &["rank0-100", "--from @20", "is not before --to @10"],
    );
    bad_input(
        &cupmon(&[
            "export-parquet",
            &dump,
            "-o",
            &out,
            "--kinds",
            "kernel,bogus",
        ]),
        &["bogus", "kernel, memcpy, memset, api"],
    );
    bad_input(
        &cupmon(&["export-parquet", &dump, "-o", &out, "--host", "a/b"]),
        &["a/b", "letters, digits"],
    );
    bad_input(
        &cupmon(&["export-parquet", &dump, "-o", &format!("{dump}/parquet")]),
        &["inside the dump directory"],
    );
    assert!(!Path::new(&format!("{dump}/parquet")).exists());
    // An overlapping slice: the command says why and how to avoid it.
    let o = cupmon(&[
        "export-parquet",
        &dump,
        "-o",
        &out,
        "--from",
        "@0",
        "--to",
        "@1900000000",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    bad_input(
        &cupmon(&["export-parquet", &dump, "-o", &out]),
        &["twice", "--from/--to"],
    );
}

#[test]
fn cupmon_sql_needs_an_export_and_says_how_to_get_duckdb() {
    let run = run_dir();
    bad_input(
        &cupmon(&["sql", &run.path().display().to_string(), "--top-kernels"]),
        &["no cupmon.sql", "cupmon export-parquet"],
    );
    let out = run.path().join("fleet");
    let o = cupmon(&[
        "export-parquet",
        &run.path().display().to_string(),
        "-o",
        &out.display().to_string(),
    ]);
    assert!(o.status.success());
    // A Python without duckdb: a venv made here has only the standard library.
    let venv = run.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        cupmon_test_skip::skipped!("python3 -m venv failed");
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(["sql", &out.display().to_string(), "--top-kernels"])
        .env("CUPMON_PYTHON", venv.join("bin/python"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("pip install 'cupmon[sql]'"), "{stderr}");
    assert!(stderr.contains("CUPMON_PYTHON"), "{stderr}");
    // No Python at all.
    let o = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .args(["sql", &out.display().to_string(), "--busy"])
        .env("CUPMON_PYTHON", "/nonexistent/python")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot run /nonexistent/python"),
        "{stderr}"
    );
}

/// The kernel rows the summary says were written (0 when it has no `kernels` line).
fn kernel_rows(stdout: &str) -> u64 {
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("kernels"))
        .map_or(0, |rest| {
            rest.split_whitespace().next().unwrap().parse().unwrap()
        })
}

#[test]
fn relative_slices_count_from_each_dump_and_split_its_rows() {
    let run = run_dir();
    let dump = run.path().join("rank0-100").display().to_string();
    let export = |out: &str, slice: &[&str]| {
        let out = run.path().join(out).display().to_string();
        let mut args = vec!["export-parquet", &dump, "-o", &out];
        args.extend_from_slice(slice);
        let o = cupmon(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // cuda_workload: 16 kernels, 259-262 ms after its first record (an API call). A
    // boundary 261 ms after it puts 8 on each side, each kernel on exactly one.
    let all = kernel_rows(&export("all", &[]));
    assert_eq!(all, 16);
    let before = kernel_rows(&export("before", &["--to", "+0.261"]));
    let after = export("after", &["--from", "+0.261"]);
    assert!(after.contains("outside --from/--to"), "{after}");
    assert_eq!(before + kernel_rows(&after), all);
    assert!(
        before > 0 && before < all,
        "{before} of {all} before +0.1 s"
    );
    // --last: the last 10 minutes hold the whole 0.263 s.
    assert_eq!(kernel_rows(&export("last", &["--last", "10m"])), all);
    bad_input(
        &cupmon(&[
            "export-parquet",
            &dump,
            "-o",
            "x",
            "--last",
            "1m",
            "--from",
            "+1",
        ]),
        &["--last", "--from"],
    );
}

#[test]
fn a_relative_slice_skips_a_dump_without_timed_records() {
    let run = run_dir();
    let last = |out: &str| {
        let out = run.path().join(out).display().to_string();
        let target = run.path().display().to_string();
        cupmon(&["export-parquet", &target, "-o", &out, "--last", "10m"])
    };
    let want = kernel_rows(&String::from_utf8_lossy(&last("before").stdout));
    assert!(want > 0);
    // The dump of a process that never used CUDA: a meta saying no chunk was written.
    let empty = run.path().join("rank2-102");
    std::fs::create_dir_all(&empty).unwrap();
    let mut meta = cupmon_records::MetaFile::read(
        fixture("cuda_workload").join(cupmon_records::dump::META_FILE),
    )
    .unwrap();
    meta.set("chunks_written", 0).set("session_open", false);
    meta.write(empty.join(cupmon_records::dump::META_FILE))
        .unwrap();
    let out = run.path().join("fleet").display().to_string();
    let o = last("fleet");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("rank2-102: no timed records"), "{stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("exported 2 dumps"), "{stdout}");
    assert_eq!(kernel_rows(&stdout), want);
    // An absolute slice needs no records to count from: the empty dump is exported
    // (nothing in it) like the others.
    let o = cupmon(&[
        "export-parquet",
        &empty.display().to_string(),
        "-o",
        &format!("{out}2"),
        "--from",
        "@0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
