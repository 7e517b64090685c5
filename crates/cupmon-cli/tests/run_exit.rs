//! The end of a program under `cupmon run` (issue 13, "nothing lost at the end"),
//! against the fake libcupti: exit does not wait for the flush period, `_exit`
//! loses nothing, and a later process with the same pid gets a dump of its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::run_fake::{command, kernels, only_dump};
use crate::util::Running;

/// `cupmon run` to the end (killed after the helpers' timeout), and how long it took.
fn timed(dir: &Path, extra: &[&str], launcher: &[&str], steps: &[&str]) -> (String, i32, Duration) {
    let cmd = command(dir, extra, launcher, steps);
    let since = Instant::now();
    let out = Running::start(cmd).finish();
    let took = since.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (stderr, out.status.code().unwrap_or(-1), took)
}

#[test]
fn regression_a_short_program_waited_a_whole_flush_period_at_exit() {
    for steps in [
        &["launch", "10"][..],
        &["launch", "10", "sleep", "300", "launch", "5"],
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (stderr, code, took) = timed(dir.path(), &["--flush-period", "1h"], &[], steps);
        eprintln!("{steps:?} under --flush-period 1h: cupmon run ended after {took:?}");
        assert_eq!(code, 0, "{stderr}");
        assert!(took < Duration::from_secs(20), "exit waited: {took:?}");
        let want = if steps.len() == 2 { 10 } else { 15 };
        assert_eq!(kernels(&only_dump(dir.path())), want);
    }
}

#[test]
fn regression_exit_lost_the_records_since_the_last_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let steps = ["launch", "30", "sleep", "50", "launch", "20", "_exit", "6"];
    let (stderr, code, _) = timed(dir.path(), &["--flush-period", "1h"], &[], &steps);
    assert_eq!(code, 6, "{stderr}");
    assert!(stderr.contains("50 kernels"), "{stderr}");
    assert!(stderr.contains("dropped records: 0"), "{stderr}");
    assert_eq!(kernels(&only_dump(dir.path())), 50);
}

/// Each file of a directory and its bytes.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = walk(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read");
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.is_file() {
            out.push(path);
        }
    }
    out
}

/// `unshare` arguments that start the program as pid 1 of a new pid namespace, as
/// a container does, if this machine allows one.
fn pid_namespace() -> Option<&'static [&'static str]> {
    const TRIES: [&[&str]; 2] = [
        &["unshare", "--pid", "--fork", "--mount-proc"],
        &[
            "unshare",
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
        ],
    ];
    TRIES.into_iter().find(|args| {
        Command::new(args[0])
            .args(&args[1..])
            .args(["sh", "-c", "test $$ = 1"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn regression_a_second_process_with_the_same_pid_truncated_the_first_ones_dump() {
    let Some(unshare) = pid_namespace() else {
        cupmon_test_skip::skipped!(
            "no pid namespace here (unshare --pid failed): two processes with pid 1 cannot be made"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (stderr, code, _) = timed(dir.path(), &[], unshare, &["launch", "10"]);
    assert_eq!(code, 0, "{stderr}");
    let first = only_dump(dir.path());
    let name = first
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("1-"), "the program was pid 1: {name}");
    let before = contents(&first);
    let (stderr, code, _) = timed(dir.path(), &[], unshare, &["launch", "20"]);
    assert_eq!(code, 0, "{stderr}");
    let mut dumps: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    dumps.sort();
    assert_eq!(dumps.len(), 2, "{dumps:?}");
    let second = dumps.iter().find(|d| **d != first).expect("a second dump");
    eprintln!("pid 1 twice: {} and {}", first.display(), second.display());
    assert!(
        second
            .file_name()
            .expect("name")
            .to_string_lossy()
            .starts_with("1-"),
        "{}",
        second.display()
    );
    assert!(
        stderr.contains(&format!("dump in {}", second.display())),
        "the summary names the new dump: {stderr}"
    );
    assert_eq!(contents(&first), before, "the first dump is untouched");
    assert_eq!((kernels(&first), kernels(second)), (10, 20));
}
