//! What trips a new user up in the first hour (issue 31): an output's name
//! that says one format while another is written, an option misspelt before
//! the program of `cupmon run`, `status` of a process cupmon does not
//! monitor, and lines too long or times not in the form `--from` takes.

use std::path::Path;

use super::util::*;

fn with_dump() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dump(&dir.path().join("dump"));
    std::fs::write(
        dir.path().join("window.json"),
        r#"{"events":[{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}]}"#,
    )
    .expect("write");
    dir
}

#[test]
fn regression_decode_to_a_trace_json_gz_wrote_a_window_perfetto_cannot_open() {
    let dir = with_dump();
    let out = cupmon_line(dir.path(), "decode dump -o x.trace.json.gz");
    assert_success(&out);
    let doc = read_json(&dir.path().join("x.trace.json.gz"));
    assert!(doc.get("traceEvents").is_some(), "a trace, by the name");
    // A name that says a window, or nothing, still gets a window; when the name
    // did not say, the closing line says what was written and how to get a trace.
    for (name, says) in [("slow.window.json", false), ("gpu.json", true)] {
        let out = cupmon_line(dir.path(), &format!("decode dump -o {name}"));
        assert_success(&out);
        let doc = read_json(&dir.path().join(name));
        assert!(doc.get("events").is_some() && doc.get("traceEvents").is_none());
        let said = stdout(&out);
        assert_eq!(said.contains("a trace window (not a trace"), says, "{said}");
    }
}

#[test]
fn decode_refuses_a_format_its_output_name_contradicts() {
    let dir = with_dump();
    for (line, mentions) in [
        (
            "decode dump --format window -o x.trace.json.gz",
            ["x.trace.json.gz", "--format window", "Chrome JSON trace"],
        ),
        (
            "decode dump --format window -o x.pftrace",
            ["x.pftrace", "--format window", "protobuf"],
        ),
        (
            "decode dump --format chrome -o x.window.json",
            ["x.window.json", "trace window", "*.trace.json.gz"],
        ),
        (
            "export --window window.json -o x.window.json",
            ["x.window.json", "trace window", "*.trace.json.gz"],
        ),
        (
            "merge --cpu window.json --window window.json -o m.window.json.gz",
            ["m.window.json.gz", "trace window", "*.trace.json.gz"],
        ),
        (
            "report dump -o r.trace.json.gz",
            ["r.trace.json.gz", "HTML page", "*.html"],
        ),
    ] {
        let out = cupmon_line(dir.path(), line);
        assert_bad_input(&out, &mentions);
    }
    let left: Vec<_> = names(dir.path())
        .into_iter()
        .filter(|n| n != "dump" && n != "window.json")
        .collect();
    assert!(left.is_empty(), "nothing written: {left:?}");
}

#[test]
fn regression_run_ran_a_misspelt_option_as_the_program() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("started");
    let marker = marker.to_str().expect("utf-8 path");
    let out = cupmon(
        dir.path(),
        &["run", "-o", "prof", "--kepe", "1G", "--", "touch", marker],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'--kepe'") && err.contains("'--keep'"),
        "{err}"
    );
    assert!(!Path::new(marker).exists(), "the program ran: {err}");
    assert!(!dir.path().join("prof").exists(), "{err}");
}

#[test]
fn the_program_starts_at_the_first_word_that_is_not_an_option_of_run() {
    // Everything from the program on is the program's, options alike.
    let dir = tempfile::tempdir().expect("tempdir");
    let script = r#"echo "$@""#;
    for dashes in [&[][..], &["--"][..]] {
        let mut args = vec!["run", "-o", "prof", "--keep", "1G"];
        args.extend_from_slice(dashes);
        args.extend(["sh", "-c", script, "sh", "--keep", "-o", "x"]);
        let out = command(dir.path(), &args)
            .env("CUPMON_INJECT_LIBRARY", super::run_fake::inject_library())
            .output()
            .expect("run cupmon");
        assert_success(&out);
        assert_eq!(stdout(&out), "--keep -o x\n", "{args:?}");
    }
}

#[test]
fn regression_status_of_an_unmonitored_process_printed_a_proc_cwd_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .current_dir(dir.path())
        .env_remove("LD_PRELOAD")
        .env_remove("CUDA_INJECTION64_PATH")
        .env_remove("CUPMON_OUTPUT_DIR")
        .spawn()
        .expect("sleep");
    let pid = sleeper.id().to_string();
    // Until exec, the child's /proc entries are still its parent's.
    while std::fs::read_to_string(format!("/proc/{pid}/comm")).map_or(true, |c| c.trim() != "sleep")
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = cupmon(dir.path(), &["status", &pid]);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_bad_input(
        &out,
        &[
            &format!("process {pid} is not monitored by cupmon"),
            "cupmon run -o DIR --",
        ],
    );
    assert!(!stderr(&out).contains("/proc/"), "{}", stderr(&out));
}

#[test]
fn regression_stats_printed_its_time_span_in_unix_ns_where_from_wants_local_times() {
    let dir = with_dump();
    let whole = cupmon(dir.path(), &["stats", "dump"]);
    assert_success(&whole);
    let text = stdout(&whole);
    let span = text
        .lines()
        .find(|l| l.starts_with("time span:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!span.contains("Unix ns"), "{span}");
    let word_after = |key: &str| {
        let at = span.find(key).unwrap_or_else(|| panic!("{key} in {span}")) + key.len();
        let word = span[at..].split_whitespace().next().expect("a time");
        word.trim_end_matches(')').to_owned()
    };
    let span_of = |out: &std::process::Output| {
        stdout(out)
            .lines()
            .find(|l| l.starts_with("time span:"))
            .map(str::to_owned)
    };
    // Pasted into --from/--to, both forms slice exactly the dump's span (every
    // timed record; those without a time are in no slice).
    let (from, to) = (word_after("--from "), word_after("--to "));
    let (unix_from, unix_to) = (word_after("Unix: "), word_after(" to @"));
    for (from, to) in [(from, to), (unix_from, format!("@{unix_to}"))] {
        let sliced = cupmon(dir.path(), &["stats", "dump", "--from", &from, "--to", &to]);
        assert_success(&sliced);
        assert_eq!(span_of(&sliced), span_of(&whole), "--from {from} --to {to}");
    }
}

#[test]
fn regression_stats_printed_top_kernel_lines_of_900_characters() {
    let dir = with_dump();
    let out = command(dir.path(), &["stats", "dump", "--top", "20"])
        .env("COLUMNS", "100")
        .output()
        .expect("stats");
    assert_success(&out);
    let text = stdout(&out);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("top kernels"))
        .skip(2)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(table.len() >= 10, "{text}");
    for line in &table {
        assert!(
            line.chars().count() <= 100,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    assert!(table.iter().any(|l| l.contains("<…>(…)")), "{text}");
    // --full-names: as recorded.
    let full = cupmon(
        dir.path(),
        &["stats", "dump", "--top", "20", "--full-names"],
    );
    assert!(!stdout(&full).contains('…'), "{}", stdout(&full));
}
