//! Hostile files (issue 28): what a crash, a full disk or another user of a shared run
//! directory leaves where cupmon reads. One table: each case damages a copy of a good
//! dump, runs one command under a short deadline (a hang fails the case instead of
//! blocking the suite) and checks the exit code, the warning naming the file and what
//! was lost, and what the rest of the dump still gave. Cases that need more than one
//! command (two runs into one directory, a full disk) follow the table.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use cupmon_records::MetaFile;

use super::util::*;

/// A command on a damaged dump must end within this, whatever the damage: a FIFO
/// waited on or `/dev/zero` read to the end would take forever.
const DEADLINE: Duration = Duration::from_secs(30);

/// Which good dump a case damages.
#[derive(Debug, Clone, Copy)]
enum Base {
    /// The torch_transformer recording: cupmon's segments, kernel names, annotation log.
    Segments,
    /// The torch_mlp recording: PyTorch's single raw-buffer file.
    Raw,
}

struct Case {
    name: &'static str,
    base: Base,
    /// Damage the dump directory.
    damage: fn(&Path),
    /// The command; `DUMP` is the dump directory, `OUT` a file beside it.
    args: &'static [&'static str],
    code: i32,
    /// On stderr (`""`: no warning at all).
    warning: &'static str,
    /// On stdout or stderr: what the rest of the dump gave.
    survives: &'static str,
    /// Nowhere in the output.
    absent: &'static str,
}

/// The dump's records in `cupmon stats` (the transformer recording holds 1709).
const ALL_RECORDS: &str = "records:         1709";
const STATS: &[&str] = &["stats", "DUMP"];
const DECODE: &[&str] = &["decode", "DUMP", "-o", "OUT"];

fn fifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    assert!(mkfifo(path), "mkfifo {}", path.display());
}

fn dev_zero(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).expect("symlink");
}

/// `bad` inserted before line `at` (from 1) of the file `rel`.
fn bad_line(dir: &Path, rel: &str, at: usize, bad: &str) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(at - 1, bad);
    std::fs::write(&path, format!("{}\n", lines.join("\n"))).expect("write");
}

/// The meta rewritten with the session still open (a process that did not stop).
fn open_session(dir: &Path) {
    let path = dir.join("cupti_monitor_meta.bin");
    let mut meta = MetaFile::read(&path).expect("meta");
    meta.set("session_open", true);
    meta.write(&path).expect("write meta");
}

/// An index of the annotation log whose first line is bad and whose second is right:
/// one block of the whole log.
fn index_with_a_bad_line(dir: &Path) {
    let log = std::fs::read_to_string(dir.join("user_annotations.jsonl")).expect("log");
    let ids: Vec<u64> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("line")["id"]
                .as_u64()
                .expect("id")
        })
        .collect();
    let (min, max) = (ids.iter().min().unwrap(), ids.iter().max().unwrap());
    let n = ids.len();
    let idx = format!(
        "not\tan\tindex line\n{}\t{n}\t{n}\t{min}\t{max}\n",
        log.len()
    );
    std::fs::write(dir.join("user_annotations.jsonl.idx"), idx).expect("write idx");
}

/// Every file cupmon reads from a dump, as a FIFO and as a link to `/dev/zero`.
macro_rules! refused {
    ($name:literal, $base:expr, $how:expr, $rel:literal, $args:expr, $code:expr, $warning:expr, $survives:expr) => {
        Case {
            name: $name,
            base: $base,
            damage: |d| $how(&d.join($rel)),
            args: $args,
            code: $code,
            warning: $warning,
            survives: $survives,
            absent: "",
        }
    };
}

fn cases() -> Vec<Case> {
    use Base::*;
    vec![
        refused!("kernel_names_fifo", Segments, fifo, "kernel_names.tsv", STATS, 0,
            "kernel_names.tsv: a FIFO (named pipe), not a regular file: not read; kernels are named by their name pointers",
            ALL_RECORDS),
        refused!("kernel_names_dev_zero", Segments, dev_zero, "kernel_names.tsv", STATS, 0,
            "kernel_names.tsv: a symbolic link (to /dev/zero), not a regular file: not read",
            ALL_RECORDS),
        refused!("annotation_log_fifo", Segments, fifo, "user_annotations.jsonl", DECODE, 0,
            "user_annotations.jsonl: a FIFO (named pipe), not a regular file: not read; user annotations are shown by their external ids",
            "(1709 events)"),
        refused!("annotation_log_dev_zero", Segments, dev_zero, "user_annotations.jsonl", DECODE, 0,
            "user_annotations.jsonl: a symbolic link (to /dev/zero)", "(1709 events)"),
        refused!("annotation_index_fifo", Segments, fifo, "user_annotations.jsonl.idx", DECODE, 0,
            "user_annotations.jsonl.idx: a FIFO (named pipe), not a regular file: not read; the log was read without it",
            "(1709 events)"),
        refused!("annotation_index_dev_zero", Segments, dev_zero, "user_annotations.jsonl.idx", DECODE, 0,
            "user_annotations.jsonl.idx: a symbolic link (to /dev/zero)", "(1709 events)"),
        refused!("segment_index_fifo", Segments, fifo, "segments/index.jsonl", STATS, 0,
            "segments/index.jsonl: a FIFO (named pipe), not a regular file: not read; its segments were read without it",
            ALL_RECORDS),
        refused!("segment_index_dev_zero", Segments, dev_zero, "segments/index.jsonl", STATS, 0,
            "segments/index.jsonl: a symbolic link (to /dev/zero)", ALL_RECORDS),
        // A digest is a shortcut: without it the segment's records give the same numbers.
        // A planted digest is damage said (its segment's records give the same numbers).
        refused!("digest_fifo", Segments, fifo, "segments/seg-000001.digest", STATS, 0,
            "segments/seg-000001.digest: a FIFO (named pipe), not a regular file; not used: the segment's records were read instead",
            ALL_RECORDS),
        refused!("digest_dev_zero", Segments, dev_zero, "segments/seg-000001.digest", STATS, 0,
            "segments/seg-000001.digest: a symbolic link (to /dev/zero), not a regular file; not used",
            ALL_RECORDS),
        refused!("segment_fifo", Segments, fifo, "segments/seg-000001.cupmr", DECODE, 0,
            "segments/seg-000001.cupmr: a FIFO (named pipe), not a regular file: not read; the activity records it holds are missing from the output",
            "(0 events)"),
        refused!("segment_dev_zero", Segments, dev_zero, "segments/seg-000001.cupmr", STATS, 0,
            "segments/seg-000001.cupmr: a symbolic link (to /dev/zero)", "distinct kernels: 0"),
        refused!("raw_buffers_fifo", Raw, fifo, "cupti_monitor_raw_buffers.bin", STATS, 0,
            "cupti_monitor_raw_buffers.bin: a FIFO (named pipe), not a regular file: not read",
            "records:         0"),
        refused!("raw_buffers_dev_zero", Raw, dev_zero, "cupti_monitor_raw_buffers.bin", STATS, 0,
            "cupti_monitor_raw_buffers.bin: a symbolic link (to /dev/zero)", "records:         0"),
        refused!("raw_dump_kernel_names_fifo", Raw, fifo, "kernel_names.tsv", STATS, 0,
            "kernel_names.tsv: a FIFO", "records:         2920"),
        // Without the meta a dump cannot be read: an error naming it, at once.
        refused!("meta_fifo", Segments, fifo, "cupti_monitor_meta.bin", STATS, 2,
            "cupti_monitor_meta.bin: a FIFO (named pipe), not a regular file", ""),
        refused!("meta_dev_zero", Segments, dev_zero, "cupti_monitor_meta.bin", STATS, 2,
            "cupti_monitor_meta.bin: a symbolic link (to /dev/zero), not a regular file", ""),
        refused!("window_fifo", Segments, fifo, "window-0.json", &["report", "DUMP", "-o", "OUT"], 0,
            "window-0.json: a FIFO (named pipe), not a regular file: its window is not marked",
            "wrote"),
        refused!("window_dev_zero", Segments, dev_zero, "window-0.json", &["report", "DUMP", "-o", "OUT"], 0,
            "window-0.json: a symbolic link (to /dev/zero)", "wrote"),
        // A control file planted for `cupmon status RUN` (14.7 GB read from /dev/zero).
        refused!("control_file_fifo", Segments, fifo, "cupmon_control.json", &["status", "DUMP"], 2,
            "no monitored process has a control channel here", ""),
        refused!("control_file_dev_zero", Segments, dev_zero, "cupmon_control.json", &["status", "DUMP"], 2,
            "no monitored process has a control channel here", ""),
        // Bad lines in the middle: skipped and counted, the rest of the file kept.
        Case {
            name: "kernel_names_bad_line_mid_file",
            base: Segments,
            damage: |d| bad_line(d, "kernel_names.tsv", 3, "not a pointer\tname"),
            args: STATS,
            code: 0,
            warning: "kernel_names.tsv: 1 bad line skipped (the first, line 3: pointer \"not a pointer\" is not a decimal u64); kept the 47 entries of the other lines",
            survives: ALL_RECORDS,
            absent: "shown as kernel@0x",
        },
        Case {
            name: "annotation_log_bad_line_mid_file",
            base: Segments,
            damage: |d| bad_line(d, "user_annotations.jsonl", 2, "{\"id\": \"x\"}"),
            args: DECODE,
            code: 0,
            warning: "user_annotations.jsonl: 1 bad line skipped (the first, line 2: not a {\"id\"",
            survives: "(1709 events)",
            absent: "",
        },
        Case {
            name: "annotation_log_bad_line_mid_file_stats",
            base: Segments,
            damage: |d| bad_line(d, "user_annotations.jsonl", 2, "[1, 2]"),
            args: STATS,
            code: 0,
            warning: "user_annotations.jsonl: 1 bad line skipped",
            survives: ALL_RECORDS,
            absent: "",
        },
        Case {
            name: "segment_index_bad_line_mid_file",
            base: Segments,
            damage: |d| bad_line(d, "segments/index.jsonl", 1, "{\"event\": \"closed\"}"),
            args: STATS,
            code: 0,
            warning: "segments/index.jsonl: line 1: ",
            survives: ALL_RECORDS,
            absent: "",
        },
        Case {
            name: "annotation_index_bad_line_mid_file",
            base: Segments,
            damage: index_with_a_bad_line,
            args: DECODE,
            code: 0,
            warning: "user_annotations.jsonl.idx: 1 bad line skipped (the first, line 1: not five TAB-separated whole numbers)",
            survives: "(1709 events)",
            absent: "",
        },
        // A full disk during `cupmon run`: the meta's last rewrite never landed.
        Case {
            name: "empty_meta_tmp_of_a_full_disk",
            base: Segments,
            damage: |d| {
                open_session(d);
                std::fs::write(d.join("cupti_monitor_meta.bin.tmp"), b"").expect("tmp");
            },
            args: STATS,
            code: 0,
            warning: "cupti_monitor_meta.bin: the process's last update of the meta was not written (cupti_monitor_meta.bin.tmp is empty: the disk was full, or the process was killed while writing it)",
            survives: ALL_RECORDS,
            absent: "killed?)",
        },
        Case {
            name: "meta_tmp_fifo",
            base: Segments,
            damage: |d| {
                open_session(d);
                fifo(&d.join("cupti_monitor_meta.bin.tmp"));
            },
            args: STATS,
            code: 0,
            warning: "cupti_monitor_meta.bin.tmp is a FIFO (named pipe), not a regular file",
            survives: ALL_RECORDS,
            absent: "",
        },
        Case {
            name: "disk_full_mark_beside_the_meta",
            base: Segments,
            damage: |d| {
                open_session(d);
                std::fs::write(d.join("cupti_monitor_meta.bin.disk-full"), b"").expect("mark");
            },
            args: STATS,
            code: 0,
            warning: "(the disk was full: cupti_monitor_meta.bin.disk-full marks the rewrite that failed)",
            survives: ALL_RECORDS,
            absent: "killed?)",
        },
        // Small findings.
        Case {
            name: "stats_from_after_the_dumps_end",
            base: Segments,
            damage: |_| {},
            args: &["stats", "DUMP", "--from", "+100"],
            code: 2,
            warning: "no records in the slice",
            survives: "the dump's records span",
            absent: "records:",
        },
        Case {
            name: "keep_of_2_to_the_64_minus_1",
            base: Segments,
            damage: |_| {},
            args: &["run", "--keep", "18446744073709551615", "--", "true"],
            code: 2,
            warning: "is too large (allowed: 16MiB to 64TiB, or auto)",
            survives: "",
            absent: "not a whole number of bytes",
        },
    ]
}

/// A copy of the base dump in a new scratch directory: (scratch, dump).
fn good_dump(base: Base) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dump = tmp.path().join("dump");
    match base {
        Base::Raw => copy_dump(&dump),
        Base::Segments => copy_tree(&fixture("torch_transformer/dump"), &dump),
    }
    (tmp, dump)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

fn run_case(case: &Case) -> Result<(), String> {
    let (tmp, dump) = good_dump(case.base);
    (case.damage)(&dump);
    let out_file = tmp.path().join("out.json");
    let out_file = if case.args.first() == Some(&"report") {
        out_file.with_extension("html")
    } else {
        out_file
    };
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| match *a {
            "DUMP" => dump.display().to_string(),
            "OUT" => out_file.display().to_string(),
            other => other.to_owned(),
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out: Output = Running::start(command(tmp.path(), &args)).finish_within(DEADLINE);
    let (err, all) = (stderr(&out), format!("{}{}", stdout(&out), stderr(&out)));
    let mut problems = Vec::new();
    if out.status.code() != Some(case.code) {
        problems.push(format!(
            "exit {:?}, expected {}",
            out.status.code(),
            case.code
        ));
    }
    if case.warning.is_empty() {
        if err.contains("warning") {
            problems.push("a warning, expected none".to_owned());
        }
    } else if !err.contains(case.warning) {
        problems.push(format!("no {:?} on stderr", case.warning));
    }
    if !all.contains(case.survives) {
        problems.push(format!("no {:?} in the output", case.survives));
    }
    if !case.absent.is_empty() && all.contains(case.absent) {
        problems.push(format!("{:?} in the output", case.absent));
    }
    if all.contains("panicked") {
        problems.push("a panic".to_owned());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {}\n{all}", case.name, problems.join("; ")))
    }
}

#[test]
fn hostile_files_are_damage_said_and_the_rest_of_the_dump_is_read() {
    let cases = cases();
    let mut names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), cases.len(), "case names are unique");
    let failures: Vec<String> = cases.iter().filter_map(|c| run_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n---\n")
    );
}

/// A run directory holding the two recordings as two processes' dumps.
fn two_dumps() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dump(&tmp.path().join("run/rank1-101"));
    copy_tree(
        &fixture("torch_transformer/dump"),
        &tmp.path().join("run/rank0-100"),
    );
    tmp
}

/// Every `*.parquet` under `dir`, as paths relative to it.
fn parquet_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                let rel = path.strip_prefix(dir).expect("under dir");
                found.push(rel.display().to_string());
            }
        }
    }
    found
}

/// Regression: `export-parquet` of two dumps onto a full disk exited 1 ("fail to get
/// inner writer", a write error turned into a string) instead of 2, the exit code of
/// input and output problems. A file-size limit makes every write past it fail as a
/// full disk does; at several limits every failure is exit 2, naming the file, and
/// no finished file is left half-written.
#[test]
fn export_parquet_onto_a_full_disk_exits_2() {
    let tmp = two_dumps();
    let run = tmp.path().join("run");
    let mut failed = 0;
    // In 512-byte blocks: from a file's first bytes to past the footer of the first ones.
    for blocks in [4, 8, 12, 16, 20, 24, 28] {
        let out = tmp.path().join(format!("pq{blocks}"));
        // SIGXFSZ ignored: a write past the limit fails with EFBIG instead of killing.
        let script = format!(
            "trap '' XFSZ; ulimit -f {blocks} && exec \"$0\" export-parquet \"$1\" -o \"$2\""
        );
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c").arg(script).arg(bin()).arg(&run).arg(&out);
        let result = Running::start(cmd).finish_within(DEADLINE);
        let err = stderr(&result);
        if result.status.success() {
            continue;
        }
        failed += 1;
        assert_eq!(
            result.status.code(),
            Some(2),
            "limit {blocks} blocks: {err}"
        );
        assert!(
            err.starts_with("cupmon: error: ") && err.contains(".parquet: cannot write: "),
            "limit {blocks} blocks: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            temps_under(&out).is_empty(),
            "limit {blocks}: {:?}",
            temps_under(&out)
        );
    }
    assert!(failed >= 3, "only {failed} limits made the export fail");
}

/// cupmon's hidden temporary files anywhere under `dir`.
fn temps_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                pending.push(path);
            } else if name.starts_with('.') && name.ends_with(".tmp") {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// Regression: GPU ops CUPTI did not time (start 0) became rows in
/// `day=1970-01-01` partitions with `start_ns = 0`. They are left out and counted,
/// as traces leave them out (torch_mlp holds 48 of them).
#[test]
fn export_parquet_leaves_untimed_gpu_ops_out_and_counts_them() {
    let tmp = two_dumps();
    let out_dir = tmp.path().join("fleet");
    let args = ["export-parquet", "run", "-o", "fleet"];
    let out = Running::start(command(tmp.path(), &args)).finish_within(DEADLINE);
    assert_success(&out);
    let files = parquet_files(&out_dir);
    assert!(!files.is_empty());
    let epoch: Vec<&String> = files.iter().filter(|f| f.contains("day=1970")).collect();
    assert!(epoch.is_empty(), "{epoch:?}");
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        said.contains(
            "48 GPU ops without a time (kernels 42, memcpy 4, memset 2: CUPTI gave them \
             start 0) were left out, as traces leave them out"
        ),
        "{said}"
    );
}

/// Regression: two `cupmon run` into one output directory listed each other's
/// processes. Each run's summary names only the dump of the program it ran.
#[test]
fn two_runs_into_one_directory_each_summarise_their_own_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The first runs longer and ends after the second, whose dump it must not list.
    let first = super::run_fake::command(dir.path(), &[], &[], &["launch", "10", "sleep", "2500"]);
    let first = Running::start(first);
    std::thread::sleep(Duration::from_millis(700));
    let second = super::run_fake::command(dir.path(), &[], &[], &["launch", "20", "sleep", "200"]);
    let second = Running::start(second).finish_within(Duration::from_secs(120));
    let first = first.finish_within(Duration::from_secs(120));
    let dumps = |out: &Output| -> Vec<String> {
        stderr(out)
            .lines()
            .filter(|l| l.contains(": dump in "))
            .map(str::to_owned)
            .collect()
    };
    let (a, b) = (dumps(&first), dumps(&second));
    assert_eq!(a.len(), 1, "first run: {}", stderr(&first));
    assert_eq!(b.len(), 1, "second run: {}", stderr(&second));
    assert_ne!(a, b);
    assert!(
        stderr(&first).contains("  10 kernels"),
        "{}",
        stderr(&first)
    );
    assert!(
        stderr(&second).contains("  20 kernels"),
        "{}",
        stderr(&second)
    );
    // Both dumps are there, each naming its run.
    let runs: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read_dir")
        .map(|e| {
            let meta = MetaFile::read(e.expect("entry").path().join("cupti_monitor_meta.bin"))
                .expect("meta");
            meta.json()["run_id"].as_str().expect("run_id").to_owned()
        })
        .collect();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0], runs[1]);
}
