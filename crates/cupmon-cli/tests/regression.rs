//! Regression tests, each named after the behaviour it pins (as ripgrep's
//! tests/regression.rs): inputs and outputs that must never be destroyed,
//! hang or be left behind. Every test drives the real `cupmon` binary.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::util::*;
use nix::sys::signal::Signal;

const CPU: &str = r#"{"baseTimeNanoseconds":1790857026000000000,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1.25}]}"#;
const WINDOW: &str = r#"{"events":[{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}]}"#;

/// A scratch directory holding cpu.json, window.json and a dump in `dump/`.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("cpu.json"), CPU).expect("write");
    std::fs::write(dir.path().join("window.json"), WINDOW).expect("write");
    copy_dump(&dir.path().join("dump"));
    dir
}

/// Every command that writes a file, writing OUT (no spaces in it).
fn writers(out: &str) -> Vec<String> {
    [
        "merge --cpu cpu.json --window window.json -o OUT",
        "export --window window.json -o OUT",
        "decode dump -o OUT",
        "decode dump --format chrome -o OUT",
        "decode dump --cpu cpu.json -o OUT",
        "demo -o OUT",
    ]
    .map(|line| line.replace("OUT", out))
    .to_vec()
}

fn is_trace_or_window(doc: &serde_json::Value) -> bool {
    doc.get("traceEvents").or(doc.get("events")).is_some()
}

// 1. Outputs that are not regular files are written in place.

#[test]
fn output_to_a_character_device_stays_a_device() {
    let dir = scratch();
    // As root a regression would replace /dev/null: use a device node of our
    // own. A normal user cannot make one, but cannot replace /dev/null
    // either (the write fails instead), so the real one is safe to use.
    let device = if is_root() {
        let node = dir.path().join("null");
        let made = Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "3"])
            .status();
        if !made.is_ok_and(|s| s.success()) {
            cupmon_test_skip::skipped!("mknod is not available");
            return;
        }
        node
    } else {
        Path::new("/dev/null").to_path_buf()
    };
    let device = device.display().to_string();
    for line in writers(&device) {
        let out = cupmon_line(dir.path(), &line);
        assert_success(&out);
        let meta = std::fs::symlink_metadata(&device).expect("meta");
        assert!(
            meta.file_type().is_char_device(),
            "`{line}` replaced {device}"
        );
        assert!(
            stderr(&out).contains(&format!("wrote {device}")),
            "{}",
            stderr(&out)
        );
    }
    assert!(temps(dir.path()).is_empty());
}

#[test]
fn output_to_a_fifo_is_streamed_and_the_fifo_stays() {
    let dir = scratch();
    let fifo = dir.path().join("out.fifo");
    if !mkfifo(&fifo) {
        return;
    }
    for line in writers("out.fifo") {
        let reader = FifoReader::start(&fifo);
        let out = cupmon_line(dir.path(), &line);
        let bytes = reader.finish();
        assert_success(&out);
        assert!(is_trace_or_window(&parse_json(&bytes, false)), "`{line}`");
        let meta = std::fs::symlink_metadata(&fifo).expect("meta");
        assert!(meta.file_type().is_fifo(), "`{line}` replaced the FIFO");
    }
    assert!(temps(dir.path()).is_empty());
}

#[test]
fn output_to_stdout_carries_the_data_and_the_closing_line_goes_to_stderr() {
    let dir = scratch();
    // As root a regression would replace the system's /dev/stdout link: use
    // a link of our own to the same place.
    let dev_stdout = if is_root() {
        std::os::unix::fs::symlink("/proc/self/fd/1", dir.path().join("stdout")).expect("link");
        "stdout"
    } else {
        "/dev/stdout"
    };
    for out in ["-", dev_stdout] {
        for line in writers(out) {
            let ran = cupmon_line(dir.path(), &line);
            assert_success(&ran);
            assert!(
                is_trace_or_window(&parse_json(&ran.stdout, false)),
                "`{line}`"
            );
            let err = stderr(&ran);
            assert!(err.contains(&format!("wrote {out} (")), "{err}");
        }
    }
    assert!(!dir.path().join("-").exists());
}

#[test]
fn output_to_a_closed_stdout_is_no_failure() {
    let dir = scratch();
    for line in [
        "decode dump -o -",
        "merge --cpu cpu.json --window window.json -o -",
    ] {
        let mut child = Running::start(command_line(dir.path(), line));
        child.close_stdout();
        assert_success(&child.finish());
    }
    assert!(!dir.path().join("-").exists(), "`-` is stdout, not a file");
}

#[test]
fn output_through_a_symlink_replaces_the_target_and_keeps_the_link() {
    let dir = scratch();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::fs::write(elsewhere.join("t.json"), "old").expect("write");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("elsewhere/t.json", &link).expect("symlink");
    for line in writers("link.json") {
        assert_success(&cupmon_line(dir.path(), &line));
        let meta = std::fs::symlink_metadata(&link).expect("meta");
        assert!(meta.file_type().is_symlink(), "`{line}` replaced the link");
        assert!(
            is_trace_or_window(&read_json(&elsewhere.join("t.json"))),
            "`{line}`"
        );
        assert_eq!(names(&elsewhere), ["t.json"], "a temporary file was left");
        assert!(temps(dir.path()).is_empty());
    }
}

// 2. An output that is an input, or inside a dump being read, is refused.

#[test]
fn decode_refuses_an_output_inside_the_dump_it_reads() {
    let dir = scratch();
    let dump = dir.path().join("dump");
    std::os::unix::fs::symlink("dump/cupti_monitor_raw_buffers.bin", dir.path().join("ln"))
        .expect("symlink");
    std::fs::hard_link(dump.join("cupti_monitor_meta.bin"), dir.path().join("hl")).expect("link");
    let outputs = [
        "dump/cupti_monitor_raw_buffers.bin",
        "dump/cupti_monitor_meta.bin",
        "dump/kernel_names.tsv",
        "dump/new.json",
        "dump/../dump/kernel_names.tsv",
        "ln",
        "hl",
    ];
    for output in outputs {
        for args in ["", "--format chrome", "--cpu cpu.json"] {
            let out = cupmon_line(dir.path(), &format!("decode dump {args} -o {output}"));
            assert_bad_input(&out, &[output, "inside the dump directory dump "]);
        }
    }
    for name in DUMP_FILES {
        let original = std::fs::read(fixture("torch_mlp").join(name)).expect("read");
        assert_eq!(
            std::fs::read(dump.join(name)).expect("read"),
            original,
            "{name} changed"
        );
    }
    assert_eq!(names(&dump), DUMP_FILES);
}

#[test]
fn an_output_that_is_an_input_by_another_name_is_refused() {
    let dir = scratch();
    std::os::unix::fs::symlink("cpu.json", dir.path().join("cpu-link.json")).expect("symlink");
    std::fs::hard_link(
        dir.path().join("window.json"),
        dir.path().join("w-hard.json"),
    )
    .expect("link");
    for (out, input) in [
        ("cpu.json", "cpu.json"),
        ("./cpu.json", "cpu.json"),
        ("cpu-link.json", "cpu.json"),
        ("w-hard.json", "window.json"),
    ] {
        let ran = cupmon_line(
            dir.path(),
            &format!("merge --cpu cpu.json --window window.json -o {out}"),
        );
        assert_bad_input(&ran, &[out, "would replace an input", input]);
    }
    let ran = cupmon_line(dir.path(), "export --window window.json -o w-hard.json");
    assert_bad_input(&ran, &["w-hard.json", "would replace an input"]);
    let ran = cupmon_line(dir.path(), "decode dump --cpu cpu.json -o cpu-link.json");
    assert_bad_input(&ran, &["cpu-link.json", "would replace an input"]);
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).expect("read");
    assert_eq!(read("cpu.json"), CPU);
    assert_eq!(read("window.json"), WINDOW);
}

// 4. A CPU trace that can be read only once is copied once, then merged.

/// The torch_mlp window and CPU trace, and its dump in `dump/`.
fn torch_mlp() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["kineto_cpu_trace.json", "expected_window.json"] {
        std::fs::copy(fixture("torch_mlp").join(name), dir.path().join(name)).expect("copy");
    }
    copy_dump(&dir.path().join("dump"));
    dir
}

fn merge_to(dir: &Path, cpu: &str, out: &str) -> Command {
    command_line(
        dir,
        &format!("merge --cpu {cpu} --window expected_window.json -o {out} --trace-name t"),
    )
}

#[test]
fn cpu_trace_from_a_fifo_merges_like_the_file_and_leaves_no_copy() {
    let dir = torch_mlp();
    let fifo = dir.path().join("cpu.fifo");
    if !mkfifo(&fifo) {
        return;
    }
    let bytes = std::fs::read(dir.path().join("kineto_cpu_trace.json")).expect("read");
    let writer = feed_fifo(&fifo, bytes, None);
    let out = Running::start(merge_to(dir.path(), "cpu.fifo", "from-fifo.json")).finish();
    assert_success(&out);
    writer.join().expect("join").expect("write fifo");
    let note = "note: cpu.fifo is not a regular file";
    assert!(stderr(&out).contains(note), "{}", stderr(&out));
    let out = Running::start(merge_to(
        dir.path(),
        "kineto_cpu_trace.json",
        "from-file.json",
    ));
    assert_success(&out.finish());
    assert_eq!(
        read_json(&dir.path().join("from-fifo.json")),
        read_json(&dir.path().join("from-file.json"))
    );
    assert!(temps(dir.path()).is_empty(), "{:?}", temps(dir.path()));
}

#[test]
fn window_and_cpu_trace_both_from_fifos_merge() {
    let dir = torch_mlp();
    let (cpu, window) = (dir.path().join("cpu.fifo"), dir.path().join("window.fifo"));
    if !mkfifo(&cpu) || !mkfifo(&window) {
        return;
    }
    let read = |name: &str| std::fs::read(dir.path().join(name)).expect("read");
    let writers = [
        feed_fifo(&cpu, read("kineto_cpu_trace.json"), None),
        feed_fifo(&window, read("expected_window.json"), None),
    ];
    let line = "merge --cpu cpu.fifo --window window.fifo -o out.json --trace-name t";
    assert_success(&cupmon_line(dir.path(), line));
    for w in writers {
        w.join().expect("join").expect("write fifo");
    }
    let out = Running::start(merge_to(
        dir.path(),
        "kineto_cpu_trace.json",
        "from-file.json",
    ));
    assert_success(&out.finish());
    assert_eq!(
        read_json(&dir.path().join("out.json")),
        read_json(&dir.path().join("from-file.json"))
    );
    assert!(temps(dir.path()).is_empty(), "{:?}", temps(dir.path()));
}

#[test]
fn cpu_trace_from_a_pipe_on_stdin_merges() {
    let dir = torch_mlp();
    let bytes = std::fs::read(dir.path().join("kineto_cpu_trace.json")).expect("read");
    for (line, out) in [
        (
            "merge --cpu /dev/stdin --window expected_window.json -o m.json",
            "m.json",
        ),
        ("decode dump --cpu /dev/stdin -o d.json", "d.json"),
    ] {
        let mut cmd = command_line(dir.path(), line);
        cmd.stdin(Stdio::piped());
        let mut child = Running::start(cmd);
        let mut stdin = child.stdin();
        let data = bytes.clone();
        let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &data));
        assert_success(&child.finish());
        writer.join().expect("join").expect("write stdin");
        let merged = read_json(&dir.path().join(out));
        let events = merged["traceEvents"].as_array().map_or(0, Vec::len);
        assert!(events > 100, "`{line}`: {events} events");
    }
    assert!(temps(dir.path()).is_empty(), "{:?}", temps(dir.path()));
}

#[test]
fn a_bad_cpu_trace_from_a_fifo_is_named_and_leaves_nothing() {
    let dir = torch_mlp();
    let fifo = dir.path().join("cpu.fifo");
    if !mkfifo(&fifo) {
        return;
    }
    let _writer = feed_fifo(&fifo, br#"{"traceEvents":[{"ph":"X""#.to_vec(), None);
    let out = Running::start(merge_to(dir.path(), "cpu.fifo", "out.json")).finish();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cupmon: error: cpu.fifo: line 1"), "{err}");
    assert!(temps(dir.path()).is_empty(), "{:?}", temps(dir.path()));
    assert!(!dir.path().join("out.json").exists());
}

// 5. An interrupted command leaves no temporary file behind.

fn wait_for_temp(dir: &Path, child: &mut Running, marker: &str) {
    let deadline = Instant::now() + TIMEOUT;
    while !temps(dir).iter().any(|t| t.contains(marker)) {
        if let Some(status) = child.exited() {
            panic!("cupmon ended ({status:?}) before its temporary file *{marker}* was seen");
        }
        assert!(
            Instant::now() < deadline,
            "no temporary file *{marker}* appeared"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn send(child: &Running, signal: Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.pid()), signal).expect("kill");
}

/// Merge from a FIFO that gets 1000 bytes and then nothing: cupmon is
/// copying it, with its copy on disk, when the signal comes.
fn interrupt_while_copying_a_slow_fifo(signal: Signal, code: i32) {
    let dir = torch_mlp();
    let fifo = dir.path().join("cpu.fifo");
    if !mkfifo(&fifo) {
        return;
    }
    let bytes = std::fs::read(dir.path().join("kineto_cpu_trace.json")).expect("read");
    let (hold, release) = std::sync::mpsc::channel::<()>();
    let _writer = feed_fifo(&fifo, bytes[..1000].to_vec(), Some(release));
    let mut child = Running::start(merge_to(dir.path(), "cpu.fifo", "out.json"));
    wait_for_temp(dir.path(), &mut child, ".out.json.cpu.");
    send(&child, signal);
    let out = child.finish();
    drop(hold);
    assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("removed its temporary file"),
        "{}",
        stderr(&out)
    );
    assert!(temps(dir.path()).is_empty(), "{:?}", temps(dir.path()));
    assert!(!dir.path().join("out.json").exists());
}

#[test]
fn sigint_while_copying_a_fifo_input_removes_the_copy_and_exits_130() {
    interrupt_while_copying_a_slow_fifo(Signal::SIGINT, 130);
}

#[test]
fn sigterm_while_copying_a_fifo_input_removes_the_copy_and_exits_143() {
    interrupt_while_copying_a_slow_fifo(Signal::SIGTERM, 143);
}

#[test]
fn sigterm_while_the_output_is_written_removes_it_and_exits_143() {
    let dir = tempfile::tempdir().expect("tempdir");
    // ~10 MB of CPU ops: writing the gzip'd output (the merge's second pass)
    // takes long enough (seconds in a debug build) to be caught in the act.
    let mut cpu = String::from(r#"{"baseTimeNanoseconds":1790857026000000000,"traceEvents":["#);
    for i in 0..100_000 {
        if i > 0 {
            cpu.push(',');
        }
        cpu.push_str(&format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":2,"ts":{i}.5,"dur":1,"args":{{"External id":{i}}}}}"#
        ));
    }
    cpu.push_str("]}");
    std::fs::write(dir.path().join("cpu.json"), cpu).expect("write");
    std::fs::write(dir.path().join("window.json"), WINDOW).expect("write");
    let line = "merge --cpu cpu.json --window window.json -o out.json.gz";
    let mut child = Running::start(command_line(dir.path(), line));
    wait_for_temp(dir.path(), &mut child, ".out.json.gz.");
    send(&child, Signal::SIGTERM);
    let out = child.finish();
    let why = "(0: the merge finished first, make the input bigger)";
    assert_eq!(out.status.code(), Some(143), "{why} {}", stderr(&out));
    assert_eq!(names(dir.path()), ["cpu.json", "window.json"]);
}

// 7. A CPU trace without traceEvents is refused.

#[test]
fn a_cpu_trace_without_trace_events_is_refused_naming_the_file() {
    let dir = scratch();
    std::fs::write(dir.path().join("empty.json"), "{}").expect("write");
    let merge = |cpu: &str| {
        cupmon_line(
            dir.path(),
            &format!("merge --cpu {cpu} --window window.json -o out.json"),
        )
    };
    let pytorch = "merge_trace_window_into_chrome_trace";
    assert_bad_input(
        &merge("empty.json"),
        &["empty.json", "no 'traceEvents'", pytorch],
    );
    let window = [
        "window.json",
        "no 'traceEvents'",
        "looks like a trace window",
    ];
    assert_bad_input(&merge("window.json"), &window);
    let decode = cupmon_line(dir.path(), "decode dump --cpu empty.json -o out.json");
    assert_bad_input(&decode, &["empty.json", "no 'traceEvents'"]);
    assert!(!dir.path().join("out.json").exists());
    assert!(temps(dir.path()).is_empty());
}

// 8. Consistent exit codes; each message names the file once.

#[test]
fn a_missing_input_is_exit_2_with_one_line_for_every_command() {
    let dir = scratch();
    for (line, named) in [
        (
            "merge --cpu nope.json --window window.json -o o.json",
            "nope.json",
        ),
        (
            "merge --cpu cpu.json --window nope.json -o o.json",
            "nope.json",
        ),
        ("export --window nope.json -o o.json", "nope.json"),
        ("decode nope -o o.json", "nope: no such dump directory"),
        ("decode dump --cpu nope.json -o o.json", "nope.json"),
        ("stats nope", "nope: no such dump directory"),
        (
            "merge --cpu cpu.json --window window.json -o no/dir/o.json",
            "no/dir",
        ),
        ("demo -o no/dir/o.json", "no/dir"),
    ] {
        let out = cupmon_line(dir.path(), line);
        assert_bad_input(&out, &[named]);
        let err = stderr(&out);
        assert!(
            err.matches("No such file").count() <= 1,
            "OS error twice: {err}"
        );
    }
    assert!(!dir.path().join("o.json").exists());
}

#[test]
fn a_dump_missing_a_file_names_it_once() {
    let dir = scratch();
    let dump = dir.path().join("dump");
    std::fs::remove_file(dump.join("cupti_monitor_raw_buffers.bin")).expect("rm");
    for line in ["decode dump -o o.json", "stats dump"] {
        let out = cupmon_line(dir.path(), line);
        assert_bad_input(&out, &["dump: cupti_monitor_raw_buffers.bin: No such file"]);
        assert_eq!(
            stderr(&out).matches("No such file").count(),
            1,
            "{}",
            stderr(&out)
        );
    }
    std::fs::remove_file(dump.join("cupti_monitor_meta.bin")).expect("rm");
    let out = cupmon_line(dir.path(), "stats dump");
    assert_bad_input(
        &out,
        &["dump: not a dump directory", "cupti_monitor_meta.bin"],
    );
}

#[test]
fn a_run_directory_given_as_a_dump_names_its_dumps_and_one_that_works() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dump(&dir.path().join("prof/4242"));
    copy_dump(&dir.path().join("prof/rank1-4343"));
    for line in ["decode prof -o o.json", "stats prof"] {
        let out = cupmon_line(dir.path(), line);
        let mentions = ["prof: a `cupmon run` output directory", "4242, rank1-4343"];
        assert_bad_input(&out, &mentions);
        let err = stderr(&out);
        let suggested = err.rsplit("e.g. ").next().expect("a suggestion").trim();
        assert_success(&cupmon(dir.path(), &["stats", suggested]));
    }
}

// 9. The hint printed after `decode` works as printed.

#[test]
fn the_merge_hint_after_decode_works_as_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dump(&dir.path().join("dump"));
    std::fs::create_dir(dir.path().join("my dir")).expect("mkdir");
    let cpu = dir.path().join("CPU_TRACE.json");
    std::fs::copy(fixture("torch_mlp/kineto_cpu_trace.json"), cpu).expect("copy");
    // `cupmon` as printed: found on PATH, as installed.
    let path = format!(
        "{}:{}",
        bin().parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for output in ["w.json", "my dir/it's a window.json.gz"] {
        let out = cupmon(dir.path(), &["decode", "dump", "-o", output]);
        assert_success(&out);
        let text = stdout(&out);
        let hint = text
            .split('`')
            .nth(1)
            .unwrap_or_else(|| panic!("no hint: {text}"));
        assert!(
            hint.starts_with("cupmon merge --cpu CPU_TRACE.json "),
            "{hint}"
        );
        let ran = Command::new("sh")
            .arg("-c")
            .arg(hint)
            .current_dir(dir.path())
            .env("PATH", &path)
            .output()
            .expect("run sh");
        assert_success(&ran);
        assert!(
            stdout(&ran).contains(".merged.trace.json.gz ("),
            "{}",
            stdout(&ran)
        );
    }
    let doc = read_json(&dir.path().join("my dir/it's a window.merged.trace.json.gz"));
    assert!(doc["traceEvents"].as_array().is_some_and(|e| e.len() > 100));
}

// A window recorded without torchrun's environment gets its rank on export.

#[test]
fn export_rank_writes_distributed_info_and_refuses_a_rank_outside_the_job() {
    let dir = scratch();
    let out = cupmon_line(
        dir.path(),
        "export --window window.json -o r1.json --rank 1 --world-size 2",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r1.json")).expect("read"))
            .expect("json");
    assert_eq!(doc["distributedInfo"]["rank"], 1);
    assert_eq!(doc["distributedInfo"]["world_size"], 2);
    let out = cupmon_line(
        dir.path(),
        "export --window window.json -o r2.json --rank 2 --world-size 2",
    );
    assert_bad_input(&out, &["--rank 2", "--world-size 2"]);
    assert!(!dir.path().join("r2.json").exists());
}
