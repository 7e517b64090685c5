//! Hostile files in a dump's `segments/` (issue 28, item 4): one table, one row per
//! finding and command. Each row damages a copy of a good multi-segment dump (10 s of
//! work in about 40 segments, each with its digest and its line in `index.jsonl`), runs
//! `cupmon stats`, `decode` or `export-parquet` on it, and checks the exit code, a
//! warning that names the file and what was lost, and how many records (`stats`) or
//! kernels (`decode`, `export-parquet`) survive: every one but those of the segments
//! (or frame) the damage took. `stats` and `decode` count the
//! same on the same damage, a flipped byte inside a sound segment included (its digest
//! stands for it only when every frame passes its checksum: see
//! `a_flipped_byte_inside_a_sound_segment_is_not_counted_from_its_digest`).

use std::path::{Path, PathBuf};
use std::process::Output;

use cupmon_records::digest::digest_file_name;
use cupmon_records::dump::{segment_file_name, IndexLine, SEGMENTS_DIR, SEGMENT_INDEX_FILE};
use serde_json::Value;

use crate::slice::ten_seconds;
use crate::util::{command, cupmon, stderr, stdout};

/// A damaged copy of the dump, and what it lost.
struct Damaged {
    _tmp: tempfile::TempDir,
    dump: PathBuf,
}

fn seg(dump: &Path, n: u32) -> PathBuf {
    dump.join(SEGMENTS_DIR).join(segment_file_name(n))
}

fn digest(dump: &Path, n: u32) -> PathBuf {
    dump.join(SEGMENTS_DIR).join(digest_file_name(n))
}

/// What `index.jsonl` says each closed segment held: (records, kernels).
fn index_counts(dump: &Path) -> Vec<(u32, u64, u64)> {
    let text = std::fs::read_to_string(dump.join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE)).unwrap();
    text.lines()
        .filter_map(|l| match serde_json::from_str::<IndexLine>(l).unwrap() {
            IndexLine::Closed(s) => Some((s.segment, s.records, s.kernels)),
            IndexLine::Retired { .. } => None,
        })
        .collect()
}

/// Each frame of segment `n`: (its chunk's first byte, its end, records, kernels),
/// from the chunk headers and time indexes.
fn frames(dump: &Path, n: u32) -> Vec<(u64, u64, u64, u64)> {
    let bytes = std::fs::read(seg(dump, n)).unwrap();
    let u32_at = |o: usize| u64::from(u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()));
    let mut out = Vec::new();
    let mut at = 0;
    while at + 48 <= bytes.len() {
        let end = at + 48 + u32_at(at + 20) as usize;
        out.push((at as u64, end as u64, u32_at(at + 48), u32_at(at + 52)));
        at = end;
    }
    out
}

/// Another dump, made the same way (another id).
fn other_dump(tmp: &Path) -> PathBuf {
    let other = tmp.join("other");
    ten_seconds(&other);
    other
}

/// How many records a damage takes.
#[derive(Debug, Clone, Copy)]
enum Lost {
    Nothing,
    /// Everything its index line says segment N held.
    Segment(u32),
    /// The first frame of segment N.
    FirstFrame(u32),
    /// The middle frame of segment N (neither its first nor its last).
    MiddleFrame(u32),
    /// The frames of segment N that reach into its last BYTES bytes.
    Tail(u32, u64),
}

struct Row {
    name: &'static str,
    damage: fn(&Path, &Path),
    command: &'static str,
    exit: i32,
    /// In one `cupmon: warning:` line.
    warning: &'static [&'static str],
    lost: Lost,
}

fn zero_fill(path: &Path, from: u64) {
    let len = std::fs::metadata(path).unwrap().len();
    let mut bytes = std::fs::read(path).unwrap();
    bytes[from as usize..].fill(0);
    assert_eq!(bytes.len() as u64, len);
    std::fs::write(path, bytes).unwrap();
}

fn all_zero(dump: &Path, _: &Path) {
    zero_fill(&seg(dump, 2), 0);
}

fn zero_tail(dump: &Path, _: &Path) {
    // What a power loss leaves when the size reached the disk and the last data did
    // not: the last sector zero.
    let len = std::fs::metadata(seg(dump, 2)).unwrap().len();
    zero_fill(&seg(dump, 2), len - TAIL);
}

fn empty(dump: &Path, _: &Path) {
    std::fs::write(seg(dump, 2), b"").unwrap();
}

fn cut(dump: &Path, _: &Path) {
    let path = seg(dump, 2);
    let len = std::fs::metadata(&path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - TAIL).unwrap();
}

fn missing_digest_left(dump: &Path, _: &Path) {
    std::fs::remove_file(seg(dump, 2)).unwrap();
}

fn missing_both(dump: &Path, _: &Path) {
    std::fs::remove_file(seg(dump, 2)).unwrap();
    std::fs::remove_file(digest(dump, 2)).unwrap();
}

fn digest_says_999999_launches(dump: &Path, _: &Path) {
    let path = digest(dump, 2);
    let mut d: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    d["kernels"][0]["launches"] = 999_999.into();
    std::fs::write(&path, d.to_string()).unwrap();
}

fn copied_under_another_number(dump: &Path, _: &Path) {
    std::fs::copy(seg(dump, 2), seg(dump, 90)).unwrap();
    std::fs::copy(digest(dump, 2), digest(dump, 90)).unwrap();
}

fn copied_over_the_next(dump: &Path, _: &Path) {
    std::fs::copy(seg(dump, 2), seg(dump, 3)).unwrap();
}

fn foreign_dropped_in(dump: &Path, tmp: &Path) {
    let other = other_dump(tmp);
    std::fs::copy(seg(&other, 1), seg(dump, 90)).unwrap();
}

fn foreign_over_ours(dump: &Path, tmp: &Path) {
    let other = other_dump(tmp);
    std::fs::copy(seg(&other, 2), seg(dump, 2)).unwrap();
    std::fs::copy(digest(&other, 2), digest(dump, 2)).unwrap();
}

fn foreign_digest(dump: &Path, tmp: &Path) {
    let other = other_dump(tmp);
    std::fs::copy(digest(&other, 2), digest(dump, 2)).unwrap();
}

fn index_line_changed(dump: &Path, _: &Path) {
    let path = dump.join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    // Segment 2's line claims a later start: a slice would skip it wrongly.
    lines[1] = lines[1].replacen("\"first_ns\":17", "\"first_ns\":18", 1);
    assert_ne!(lines[1], text.lines().nth(1).unwrap());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

fn frame_byte_flipped(dump: &Path, _: &Path) {
    let path = seg(dump, 2);
    let mut bytes = std::fs::read(&path).unwrap();
    // Inside the first frame's compact buffer (past header, time index and seal).
    bytes[48 + 40 + 24 + 30] ^= 0x10;
    std::fs::write(&path, bytes).unwrap();
}

/// A byte flipped in the middle of a sound segment: inside the compact buffer of its
/// middle frame, its size, first and last frames intact (what `stats` and `report`
/// took for sound and counted from its digest).
fn middle_frame_byte_flipped(dump: &Path, _: &Path) {
    let all = frames(dump, 2);
    assert!(all.len() >= 3, "a middle frame: {all:?}");
    let (start, end, _, _) = all[all.len() / 2];
    let path = seg(dump, 2);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[((start + 48 + 40 + 24 + end) / 2) as usize] ^= 0x10;
    std::fs::write(&path, bytes).unwrap();
}

/// Bytes a zero-filled tail or a cut takes from the end of a segment: a disk sector.
const TAIL: u64 = 512;

const TABLE: &[Row] = &[
    Row {
        name: "all-zero closed segment (power loss)",
        damage: all_zero,
        command: "export-parquet",
        exit: 0,
        warning: &["seg-000002.cupmr", "could be read", "lost"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "another dump's segment dropped in",
        damage: foreign_dropped_in,
        command: "export-parquet",
        exit: 0,
        warning: &["seg-000090.cupmr", "another dump"],
        lost: Lost::Nothing,
    },
    Row {
        name: "all-zero closed segment (power loss)",
        damage: all_zero,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "could be read", "lost"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "all-zero closed segment (power loss)",
        damage: all_zero,
        command: "decode",
        exit: 0,
        warning: &[
            "seg-000002.cupmr",
            "bytes are zero",
            "nothing in it survived",
        ],
        lost: Lost::Segment(2),
    },
    Row {
        name: "zero-filled tail of a closed segment",
        damage: zero_tail,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "could be read"],
        lost: Lost::Tail(2, TAIL),
    },
    Row {
        name: "zero-filled tail of a closed segment",
        damage: zero_tail,
        command: "decode",
        exit: 0,
        warning: &["seg-000002.cupmr", "could be read"],
        lost: Lost::Tail(2, TAIL),
    },
    Row {
        name: "empty closed segment",
        damage: empty,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "0 could be read"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "empty closed segment",
        damage: empty,
        command: "decode",
        exit: 0,
        warning: &["seg-000002.cupmr", "0 could be read"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "cut closed segment",
        damage: cut,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "truncated"],
        lost: Lost::Tail(2, TAIL),
    },
    Row {
        name: "cut closed segment",
        damage: cut,
        command: "decode",
        exit: 0,
        warning: &["seg-000002.cupmr", "could be read"],
        lost: Lost::Tail(2, TAIL),
    },
    Row {
        name: "missing segment, its digest left",
        damage: missing_digest_left,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "only its digest is left", "lost"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "missing segment, its digest left",
        damage: missing_digest_left,
        command: "decode",
        exit: 0,
        warning: &["seg-000002.cupmr", "only its digest is left", "lost"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "missing segment and digest",
        damage: missing_both,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "missing", "Unix ns"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "digest contradicts its segment",
        damage: digest_says_999999_launches,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.digest", "checksum", "records were read instead"],
        lost: Lost::Nothing,
    },
    Row {
        name: "duplicated segment",
        damage: copied_under_another_number,
        command: "stats",
        exit: 0,
        warning: &["seg-000090.cupmr", "same frames as segment 2"],
        lost: Lost::Nothing,
    },
    Row {
        name: "duplicated segment",
        damage: copied_under_another_number,
        command: "decode",
        exit: 0,
        warning: &["seg-000090.cupmr", "same frames as segment 2"],
        lost: Lost::Nothing,
    },
    Row {
        name: "segment copied over the next",
        damage: copied_over_the_next,
        command: "stats",
        exit: 0,
        warning: &["seg-000003.cupmr", "same frames as segment 2", "lost"],
        lost: Lost::Segment(3),
    },
    Row {
        name: "another dump's segment dropped in",
        damage: foreign_dropped_in,
        command: "stats",
        exit: 0,
        warning: &["seg-000090.cupmr", "another dump"],
        lost: Lost::Nothing,
    },
    Row {
        name: "another dump's segment dropped in",
        damage: foreign_dropped_in,
        command: "decode",
        exit: 0,
        warning: &["seg-000090.cupmr", "another dump"],
        lost: Lost::Nothing,
    },
    Row {
        name: "another dump's segment over ours",
        damage: foreign_over_ours,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "another dump", "lost"],
        lost: Lost::Segment(2),
    },
    Row {
        name: "another dump's digest over ours",
        damage: foreign_digest,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.digest", "not used"],
        lost: Lost::Nothing,
    },
    Row {
        name: "index line changed",
        damage: index_line_changed,
        command: "stats",
        exit: 0,
        warning: &["index.jsonl: line 2", "checksum"],
        lost: Lost::Nothing,
    },
    Row {
        name: "index line changed",
        damage: index_line_changed,
        command: "decode",
        exit: 0,
        warning: &["index.jsonl: line 2", "checksum"],
        lost: Lost::Nothing,
    },
    Row {
        name: "a byte of a frame flipped",
        damage: frame_byte_flipped,
        command: "decode",
        exit: 0,
        warning: &["seg-000002.cupmr", "fails its checksum"],
        lost: Lost::FirstFrame(2),
    },
    Row {
        name: "a byte in the middle of a sound segment flipped",
        damage: middle_frame_byte_flipped,
        command: "stats",
        exit: 0,
        warning: &["seg-000002.cupmr", "fails its checksum"],
        lost: Lost::MiddleFrame(2),
    },
    Row {
        name: "a byte in the middle of a sound segment flipped",
        damage: middle_frame_byte_flipped,
        command: "decode",
        exit: 0,
        warning: &["seg-000002.cupmr", "fails its checksum"],
        lost: Lost::MiddleFrame(2),
    },
];

/// Records (`stats`) or kernel events (`decode`) a command's output shows.
fn survivors(command: &str, dir: &Path, out: &Output) -> u64 {
    if command == "export-parquet" {
        // `  kernels        N rows ...` in its summary.
        let text = stdout(out) + &stderr(out);
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("kernels "))
            .unwrap_or_else(|| panic!("no kernels line: {text}"));
        return line.split_whitespace().nth(1).unwrap().parse().unwrap();
    }
    if command == "stats" {
        let text = stdout(out);
        let line = text
            .lines()
            .find(|l| l.starts_with("records:"))
            .unwrap_or_else(|| panic!("no records line: {text}"));
        return line["records:".len()..].trim().parse().unwrap();
    }
    let window: Value =
        serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    window["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "kernel")
        .count() as u64
}

fn run(row: &Row) {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("dump");
    ten_seconds(&dump);
    let counts = index_counts(&dump);
    assert!(counts.len() >= 10, "a multi-segment dump: {counts:?}");
    let (records, kernels): (u64, u64) = counts.iter().fold((0, 0), |a, c| (a.0 + c.1, a.1 + c.2));
    let (lost_records, lost_kernels) = match row.lost {
        Lost::Nothing => (0, 0),
        Lost::Segment(n) => counts
            .iter()
            .find(|c| c.0 == n)
            .map(|c| (c.1, c.2))
            .unwrap(),
        Lost::FirstFrame(n) => frames(&dump, n).first().map(|f| (f.2, f.3)).unwrap(),
        Lost::MiddleFrame(n) => {
            let all = frames(&dump, n);
            (all[all.len() / 2].2, all[all.len() / 2].3)
        }
        Lost::Tail(n, bytes) => {
            let all = frames(&dump, n);
            let len = all.last().unwrap().1;
            all.iter()
                .filter(|f| f.1 > len - bytes)
                .fold((0, 0), |a, f| (a.0 + f.2, a.1 + f.3))
        }
    };
    (row.damage)(&dump, tmp.path());
    let d = Damaged {
        dump: dump.clone(),
        _tmp: tmp,
    };
    let dir = d.dump.parent().unwrap().to_path_buf();
    let dump_arg = d.dump.to_str().unwrap();
    let out = match row.command {
        "stats" => cupmon(&dir, &["stats", dump_arg]),
        "export-parquet" => cupmon(&dir, &["export-parquet", dump_arg, "-o", "pq"]),
        _ => cupmon(&dir, &["decode", dump_arg, "-o", "out.json"]),
    };
    let err = stderr(&out);
    let what = format!("{} ({})", row.name, row.command);
    // The harness captures this and shows it only for a failing row.
    eprintln!("=== {what}\n{err}");
    assert_eq!(out.status.code(), Some(row.exit), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert!(
        err.lines().any(
            |l| l.starts_with("cupmon: warning: ") && row.warning.iter().all(|w| l.contains(w))
        ),
        "{what}: no warning with {:?}: {err}",
        row.warning
    );
    let (total, lost) = if row.command == "stats" {
        (records, lost_records)
    } else {
        (kernels, lost_kernels)
    };
    assert!(
        lost > 0 || matches!(row.lost, Lost::Nothing),
        "{what}: the damage takes something"
    );
    assert_eq!(
        survivors(row.command, &dir, &out),
        total - lost,
        "{what}: {total} before, {lost} lost; {err}"
    );
}

#[test]
fn hostile_segments_are_warnings_with_what_was_lost_and_the_rest_is_read() {
    for row in TABLE {
        run(row);
    }
}

/// A byte flipped in the middle of a segment whose size, first and last frames are
/// sound: `stats` and `report` counted it from its digest, with no warning. Now the
/// digest stands for a segment only when every frame passes its checksum: both warn,
/// naming the segment and the frame, and count what is left, as `decode` does.
#[test]
fn a_flipped_byte_inside_a_sound_segment_is_not_counted_from_its_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("dump");
    ten_seconds(&dump);
    let records: u64 = index_counts(&dump).iter().map(|c| c.1).sum();
    let frame = frames(&dump, 2);
    let lost = frame[frame.len() / 2].2;
    middle_frame_byte_flipped(&dump, tmp.path());
    let dump_arg = dump.to_str().unwrap();
    let stats = cupmon(tmp.path(), &["stats", dump_arg]);
    assert_eq!(stats.status.code(), Some(0), "{}", stderr(&stats));
    let err = stderr(&stats);
    let warned = |err: &str| {
        err.lines().any(|l| {
            l.starts_with("cupmon: warning: ")
                && l.contains("seg-000002.cupmr")
                && l.contains("fails its checksum")
        }) && err
            .lines()
            .any(|l| l.contains("seg-000002") && l.contains(&format!(": {lost} lost")))
    };
    assert!(warned(&err), "{err}");
    assert_eq!(
        survivors("stats", tmp.path(), &stats),
        records - lost,
        "{err}"
    );
    let report = cupmon(tmp.path(), &["report", dump_arg, "-o", "r.html"]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    assert!(warned(&stderr(&report)), "{}", stderr(&report));
    let html = std::fs::read_to_string(tmp.path().join("r.html")).unwrap();
    assert!(html.contains("seg-000002.cupmr") && html.contains("fails its checksum"));
    assert!(html.contains(&format!("<td class=\"num\">{}</td>", records - lost)));
}

/// A segment verified once is marked (in the user's cache, not the dump) and not read
/// again while it stays as it was; a byte flipped after the mark changes the file's
/// times, so the next `stats` verifies it again and warns.
#[test]
fn a_segment_changed_after_its_verified_mark_is_verified_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("dump");
    ten_seconds(&dump);
    let cache = tmp.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let stats = || {
        command(tmp.path(), &["stats", dump.to_str().unwrap()])
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap()
    };
    let first = stats();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(!stderr(&first).contains("warning"), "{}", stderr(&first));
    let marks_dir = cache.join("cupmon-verified");
    let marks: Vec<_> = std::fs::read_dir(&marks_dir).unwrap().flatten().collect();
    assert_eq!(marks.len(), 1, "one file for the dump");
    let lines = std::fs::read_to_string(marks[0].path())
        .unwrap()
        .lines()
        .count();
    let closed = index_counts(&dump).len();
    assert!(
        lines >= closed - 1 && lines <= closed,
        "{lines} marks, {closed} closed"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&marks_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let again = stats();
    assert_eq!(stdout(&again), stdout(&first), "the same from the marks");
    middle_frame_byte_flipped(&dump, tmp.path());
    let after = stats();
    assert!(
        stderr(&after).contains("seg-000002.cupmr")
            && stderr(&after).contains("fails its checksum"),
        "{}",
        stderr(&after)
    );
}
