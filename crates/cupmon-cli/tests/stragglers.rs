//! `cupmon stragglers` on a two-rank run through the fake libcupti: rank 1 launches
//! one extra kernel per step of twenty (5% more GPU time for the same work) and is
//! named with that kernel (by `cupmon stragglers`, the report, `status` and
//! `diagnose`); two equal ranks name no straggler.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use cupmon_records::dump::META_FILE;
use serde_json::Value;

use crate::run_fake::command;
use crate::util::{assert_success, cupmon, stdout};

/// Two ranks at once under `cupmon run -o dir`, rank `r` launching `extra[r]`
/// `demo::straggle` kernels after each step's twenty `demo::add`.
fn two_ranks(dir: &Path, extra: [u32; 2]) {
    for c in start_two_ranks(dir, extra, &[], &[]) {
        let out = c.wait_with_output().expect("cupmon run");
        assert!(out.status.success(), "{out:?}");
    }
}

/// [`two_ranks`] started, with `cupmon run` flags `flags` and steps `then` after the
/// training steps.
fn start_two_ranks(dir: &Path, extra: [u32; 2], flags: &[&str], then: &[&str]) -> Vec<Child> {
    (0..2)
        .map(|r| {
            let e = extra[r].to_string();
            let mut steps = vec!["steps", "1500", "20", &e];
            steps.extend_from_slice(then);
            command(dir, flags, &[], &steps)
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", "2")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start cupmon run")
        })
        .collect()
}

fn analysis(dir: &Path) -> Value {
    let out = cupmon(dir, &["stragglers", "prof", "--json"]);
    assert_success(&out);
    serde_json::from_str(&stdout(&out)).expect("JSON")
}

fn named(a: &Value) -> Vec<(String, String)> {
    a["periods"]
        .as_array()
        .expect("periods")
        .iter()
        .filter(|p| !p["straggler"].is_null())
        .map(|p| {
            let s = &p["straggler"];
            let rank = a["ranks"][s["rank"].as_u64().unwrap() as usize]["label"]
                .as_str()
                .unwrap()
                .to_owned();
            let kernel = s["kernels"][0]["kernel"]["name"]
                .as_str()
                .unwrap()
                .to_owned();
            (rank, kernel)
        })
        .collect()
}

#[test]
fn a_rank_slowed_by_an_extra_kernel_per_step_is_named_with_its_kernel() {
    let tmp = tempfile::tempdir().unwrap();
    two_ranks(&tmp.path().join("prof"), [0, 1]);
    let a = analysis(tmp.path());
    let named = named(&a);
    assert!(!named.is_empty(), "no straggler named: {a:#}");
    for (rank, kernel) in &named {
        assert_eq!(rank, "rank 1", "{a:#}");
        assert!(kernel.starts_with("demo::straggle"), "{kernel}");
    }
    // The score is the extra work: 21 kernels where the other rank runs 20.
    let p = a["periods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| !p["straggler"].is_null())
        .unwrap();
    let score = p["straggler"]["score"].as_f64().unwrap();
    assert!((score - 0.05).abs() < 0.005, "{score}");
    // The table says the same.
    let out = cupmon(tmp.path(), &["stragglers", "prof"]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("rank 1: +5.0% compute"), "{text}");
    assert!(text.contains("demo::straggle() <<<"), "{text}");
    // And the report's section.
    let out = cupmon(tmp.path(), &["report", "prof", "-o", "r.html"]);
    assert_success(&out);
    let html = std::fs::read_to_string(tmp.path().join("r.html")).unwrap();
    let section = &html[html.find("id=\"compute-stragglers\"").expect("the section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<td>rank 1</td>"), "{section}");
    assert!(section.contains("demo::straggle()"), "{section}");
}

#[test]
fn diagnose_names_the_straggler_of_the_minutes_before_the_hang() {
    // Rank 1 straggles, then both ranks hang in a kernel that never completes:
    // `--hang-after 1s` writes a hang record into each dump, and the diagnosis says
    // who straggled before it.
    let tmp = tempfile::tempdir().unwrap();
    let ranks = start_two_ranks(
        &tmp.path().join("prof"),
        [0, 1],
        &["--hang-after", "1s"],
        &[
            "pending", "1", "kernel", "7", "1", "_Z4spinv", "sleep", "3000",
        ],
    );
    for c in ranks {
        let out = c.wait_with_output().expect("cupmon run");
        assert!(out.status.success(), "{out:?}");
    }
    let out = cupmon(tmp.path(), &["diagnose", "prof", "--json"]);
    assert_success(&out);
    let d: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert!(d["headline"].is_string(), "{d:#}");
    assert!(
        d["ranks"]
            .as_array()
            .is_some_and(|r| r.iter().all(|r| r["record"].is_string())),
        "a rank without its hang record: {d:#}"
    );
    let named = named(&d["stragglers"]);
    assert!(!named.is_empty(), "no straggler named: {d:#}");
    for (rank, kernel) in &named {
        assert_eq!(rank, "rank 1", "{d:#}");
        assert!(kernel.starts_with("demo::straggle"), "{kernel}");
    }
    let out = cupmon(tmp.path(), &["diagnose", "prof"]);
    assert_success(&out);
    let text = stdout(&out);
    let section = &text[text
        .find("In the last 5 minutes of the dumps")
        .expect(&text)..];
    assert!(section.contains("rank 1: +5.0% compute"), "{text}");
    assert!(section.contains("demo::straggle() <<<"), "{text}");
}

#[test]
fn diagnose_of_one_dump_has_no_straggler_part() {
    let tmp = tempfile::tempdir().unwrap();
    two_ranks(&tmp.path().join("prof"), [0, 1]);
    let rank0 = std::fs::read_dir(tmp.path().join("prof"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join(META_FILE).is_file())
        .expect("a dump");
    let out = cupmon(tmp.path(), &["diagnose", rank0.to_str().unwrap(), "--json"]);
    assert_success(&out);
    let d: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert!(d["stragglers"].is_null(), "{d:#}");
    let out = cupmon(tmp.path(), &["diagnose", rank0.to_str().unwrap()]);
    assert_success(&out);
    assert!(!stdout(&out).contains("In the last"), "{}", stdout(&out));
}

#[test]
fn equal_ranks_name_no_straggler() {
    let tmp = tempfile::tempdir().unwrap();
    two_ranks(&tmp.path().join("prof"), [1, 1]);
    let a = analysis(tmp.path());
    assert_eq!(named(&a), Vec::<(String, String)>::new(), "{a:#}");
    let compared = a["periods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["not_compared"].is_null())
        .count();
    assert!(compared >= 1, "no period compared the two ranks: {a:#}");
}

#[test]
fn bad_arguments_are_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let out = cupmon(tmp.path(), &["stragglers", "missing"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let out = cupmon(tmp.path(), &["stragglers", "empty", "--threshold", "-1"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn status_names_the_straggler_of_the_last_minute_while_the_ranks_run() {
    let tmp = tempfile::tempdir().unwrap();
    let prof = tmp.path().join("prof");
    let ranks = start_two_ranks(
        &prof,
        [0, 1],
        &["--flush-period", "100ms"],
        &["sleep", "6000"],
    );
    let since = Instant::now();
    let text = loop {
        let out = cupmon(tmp.path(), &["status", "prof"]);
        let text = stdout(&out);
        if text.contains("STRAGGLER") || since.elapsed() > Duration::from_secs(20) {
            break text;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    for c in ranks {
        let out = c.wait_with_output().expect("cupmon run");
        assert!(out.status.success(), "{out:?}");
    }
    assert!(text.contains("STRAGGLER: rank 1 +5.0%"), "{text}");
    assert!(text.contains("demo::straggle() <<<"), "{text}");
}
