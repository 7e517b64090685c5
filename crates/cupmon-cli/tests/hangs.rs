//! Hang records and `cupmon diagnose` end to end against the fake libcupti: ranks of
//! one job run at once under `cupmon run --hang-after 1s`, each a stand-in program
//! whose steps make one kind of hang; the diagnosis must name the culprit.

use std::path::Path;
use std::process::{Command, Output};

use crate::run_fake::{command, only_dump};

const AR: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const AG: &str = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

/// Warm-up shared by every rank: compute on stream 7, two all-reduces on stream 13.
fn warm_up() -> Vec<String> {
    [
        "kernel", "7", "5", "_Z4stepv", "kernel", "13", "2", AR, "kernel", "7", "5", "_Z4stepv",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn steps(rest: &[&str]) -> Vec<String> {
    let mut v = warm_up();
    v.extend(rest.iter().map(|s| (*s).to_owned()));
    v
}

/// Runs each rank's steps at once under `cupmon run -o DIR --hang-after 1s`.
fn run_ranks(dir: &Path, ranks: &[Vec<String>]) -> Vec<Output> {
    let children: Vec<_> = ranks
        .iter()
        .enumerate()
        .map(|(rank, steps)| {
            let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
            command(dir, &["--hang-after", "1s"], &[], &steps)
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", ranks.len().to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("run cupmon")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect()
}

fn diagnose(dir: &Path) -> (serde_json::Value, String) {
    let cupmon = env!("CARGO_BIN_EXE_cupmon");
    let json = Command::new(cupmon)
        .args(["diagnose", "--json"])
        .arg(dir)
        .output()
        .expect("cupmon diagnose --json");
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let text = Command::new(cupmon)
        .arg("diagnose")
        .arg(dir)
        .output()
        .expect("cupmon diagnose");
    assert!(text.status.success());
    // The diagnosis as a person reads it: `cargo test hangs -- --nocapture` shows each.
    eprintln!(
        "cupmon diagnose {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&text.stdout)
    );
    (
        serde_json::from_slice(&json.stdout).expect("diagnose --json is JSON"),
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

fn culprit_ranks(d: &serde_json::Value) -> Vec<i64> {
    let mut r: Vec<i64> = d["culprits"]
        .as_array()
        .expect("culprits")
        .iter()
        .map(|c| c["rank"].as_i64().expect("rank"))
        .collect();
    r.dedup();
    r
}

/// Runs a job and diagnoses it; every rank ended cleanly.
fn job(ranks: &[Vec<String>]) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rank, out) in run_ranks(dir.path(), ranks).iter().enumerate() {
        assert_eq!(
            out.status.code(),
            Some(0),
            "rank {rank}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (d, text) = diagnose(dir.path());
    // The report's hang section says the same.
    let page = dir.path().join("report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("report")
        .arg(dir.path())
        .arg("-o")
        .arg(&page)
        .output()
        .expect("cupmon report");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("report.html");
    let headline = d["headline"].as_str().expect("headline");
    assert!(html.contains("<h2>Hang</h2>"), "no hang section");
    assert!(
        html.contains(headline),
        "the report's hang section lacks {headline:?}"
    );
    (d, text)
}

#[test]
fn a_compute_kernel_that_never_ends_names_its_rank() {
    let waiting = steps(&["pending", "1", "kernel", "13", "1", AR, "sleep", "4000"]);
    let stuck = steps(&[
        "pending", "1", "kernel", "7", "1", "_Z4spinv", "kernel", "13", "1", AR, "sleep", "4000",
    ]);
    let (d, text) = job(&[waiting.clone(), stuck, waiting]);
    assert_eq!(culprit_ranks(&d), [1], "{text}");
    assert!(text.contains("spin()"), "{text}");
    assert_eq!(d["ranks"][1]["state"]["state"], "compute-kernel", "{text}");
    assert_eq!(d["ranks"][0]["state"]["state"], "collective", "{text}");
    assert_eq!(d["ranks"][0]["state"]["index"], 3, "{text}");
}

#[test]
fn a_host_thread_that_stops_launching_names_its_rank() {
    let waiting = steps(&["pending", "1", "kernel", "13", "1", AR, "sleep", "4000"]);
    let stopped = steps(&["sleep", "4000"]);
    let (d, text) = job(&[waiting.clone(), stopped, waiting]);
    assert_eq!(culprit_ranks(&d), [1], "{text}");
    assert_eq!(d["ranks"][1]["state"]["state"], "host-stopped", "{text}");
    assert!(text.contains("never launched collective #3"), "{text}");
}

#[test]
fn a_missing_collective_names_the_rank_that_skipped_it() {
    let others = steps(&[
        "pending", "1", "kernel", "13", "1", AR, "kernel", "13", "1", AG, "sleep", "4000",
    ]);
    let skipped = steps(&["pending", "1", "kernel", "13", "1", AG, "sleep", "4000"]);
    let (d, text) = job(&[others.clone(), skipped, others]);
    assert_eq!(culprit_ranks(&d), [1], "{text}");
    assert_eq!(d["divergences"][0]["index"], 3, "{text}");
    assert_eq!(
        d["divergences"][0]["diverged"][0]["difference"], "missing",
        "{text}"
    );
}

#[test]
fn an_extra_collective_names_the_rank_that_launched_it() {
    let others = steps(&["pending", "1", "kernel", "13", "1", AG, "sleep", "4000"]);
    let extra = steps(&[
        "pending", "1", "kernel", "13", "1", AR, "kernel", "13", "1", AG, "sleep", "4000",
    ]);
    let (d, text) = job(&[others.clone(), extra, others]);
    assert_eq!(culprit_ranks(&d), [1], "{text}");
    assert_eq!(
        d["divergences"][0]["diverged"][0]["difference"], "extra",
        "{text}"
    );
    assert!(text.contains("extra collective #3"), "{text}");
}

#[test]
fn mismatched_sizes_name_the_rank_whose_collective_differs() {
    // NCCL sizes its grid (channels) by the message: another size, another grid.
    let others = steps(&["pending", "1", "kernel", "13", "1", AR, "sleep", "4000"]);
    let other_size = steps(&[
        "grid", "64", "pending", "1", "kernel", "13", "1", AR, "sleep", "4000",
    ]);
    let (d, text) = job(&[others.clone(), other_size, others]);
    assert_eq!(culprit_ranks(&d), [1], "{text}");
    assert_eq!(
        d["divergences"][0]["diverged"][0]["difference"], "mismatch",
        "{text}"
    );
    assert!(text.contains("grid 64x1x1"), "{text}");
}

#[test]
fn without_nccl_the_rank_whose_host_stopped_is_named_and_the_busy_one_writes_no_record() {
    let mut busy: Vec<String> = Vec::new();
    for _ in 0..12 {
        busy.extend(["kernel", "7", "3", "_Z4stepv", "sleep", "250"].map(str::to_owned));
    }
    let stopped = ["kernel", "7", "3", "_Z4stepv", "sleep", "4000"]
        .map(str::to_owned)
        .to_vec();
    let (d, text) = job(&[busy, stopped]);
    assert_eq!(culprit_ranks(&d), [1], "{text}");
    assert_eq!(d["ranks"][0]["state"]["state"], "progressing", "{text}");
    assert!(d["ranks"][0]["record"].is_null(), "{text}");
}

#[test]
fn sigterm_and_sigabrt_write_a_hang_record_first() {
    for (step, signal) in [("sigterm", "SIGTERM"), ("sigabrt", "SIGABRT")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = command(
            dir.path(),
            &["--hang-after", "0"],
            &[],
            &[
                "kernel", "7", "3", "_Z4stepv", "pending", "1", "kernel", "7", "1", "_Z4spinv",
                step,
            ],
        )
        .output()
        .expect("run");
        assert_ne!(out.status.code(), Some(0));
        let dump = only_dump(dir.path());
        let record = std::fs::read_to_string(dump.join("hang-1.json")).unwrap_or_else(|e| {
            panic!(
                "{step}: no hang record ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let record: serde_json::Value = serde_json::from_str(&record).expect("JSON");
        assert_eq!(record["trigger"], "signal");
        assert_eq!(record["detail"], signal);
        assert_eq!(record["streams"][0]["running"][0]["name"], "_Z4spinv");
    }
}

#[test]
fn hang_dump_writes_a_record_on_request() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = command(
        dir.path(),
        &["--hang-after", "0"],
        &[],
        &[
            "kernel", "7", "3", "_Z4stepv", "pending", "1", "kernel", "7", "2", "_Z4spinv", "sync",
            "4000",
        ],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .expect("run");
    let cupmon = env!("CARGO_BIN_EXE_cupmon");
    let mut written = None;
    for _ in 0..60 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let out = Command::new(cupmon)
            .arg("hang-dump")
            .arg(dir.path())
            .output()
            .expect("hang-dump");
        if out.status.success() {
            written = Some(String::from_utf8_lossy(&out.stdout).into_owned());
            break;
        }
    }
    let said = written.expect("hang-dump never succeeded");
    assert!(said.contains("hang-1.json"), "{said}");
    let _ = child.wait();
    let dump = only_dump(dir.path());
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dump.join("hang-1.json")).expect("record"))
            .expect("JSON");
    assert_eq!(record["trigger"], "on-demand");
    let thread = &record["threads"][0];
    assert_eq!(
        thread["blocked_in"]["api"], "cudaStreamSynchronize",
        "{record}"
    );
}
