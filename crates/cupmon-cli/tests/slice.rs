//! `cupmon decode/stats --from/--to/--last` on segmented dumps: every time-spec form
//! picks the right instant (UTC and America/New_York in the child's TZ), a slice holds
//! exactly the events an independent filter of the full decode keeps (window, Chrome
//! and merged traces), and bad specs or empty slices are errors naming the flag.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use cupmon_records::dump::SegmentPolicy;
use cupmon_records::{
    ActivityKind, DumpWriter, ExternalCorrelationRecord, KernelRecord, Layout, MemcpyRecord,
    MetaFile, Record, RecordWriter,
};
use serde_json::Value;

use crate::util::{assert_bad_input, assert_success, command, fixture, stderr, stdout, Running};

/// 2026-12-01T14:32:00Z (09:32:00 in New York, UTC-5 in December).
pub const T0: u64 = 1_796_135_520_000_000_000;
const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

pub fn meta() -> MetaFile {
    let mut m = MetaFile::new();
    m.set("cupti_version", 130_000)
        .set("buffer_size", 1 << 20)
        .set("session_open", false)
        .set("dropped_records", 0)
        .set("chunks_written", 0);
    m
}

pub fn policy(segment_size: u64, keep: u64) -> SegmentPolicy {
    SegmentPolicy {
        segment_size,
        segment_period: Duration::from_secs(3600),
        keep,
        keep_for: None,
    }
}

pub fn kernel(start: u64, end: u64, device: u32, correlation: u32, name_ptr: u64) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end,
        completed: end,
        device_id: device,
        stream_id: 7,
        correlation_id: correlation,
        grid_x: 64,
        grid_y: 1,
        grid_z: 1,
        block_x: 128,
        block_y: 1,
        block_z: 1,
        name_ptr,
        ..KernelRecord::default()
    })
}

pub fn copy(start: u64, end: u64, bytes: u64, correlation: u32) -> Record {
    Record::Memcpy(MemcpyRecord {
        kind: ActivityKind::MEMCPY,
        copy_kind: 1,
        bytes,
        start,
        end,
        stream_id: 9,
        correlation_id: correlation,
        ..MemcpyRecord::default()
    })
}

/// Write `buffers` (one frame each) as a segmented dump in `dir` with kernel names
/// `kernel0`..`kernel4` at 0x1000 + 0x40 i.
pub fn write_dump(dir: &Path, buffers: &[Vec<Record>], policy: SegmentPolicy) {
    let layout = Layout::cupti_13_0();
    let mut w = DumpWriter::create_segmented(dir, &meta(), policy).unwrap();
    // As the monitor does: each kernel counted as launched before its buffer comes.
    let launched = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = launched.clone();
    w.count_launches_with(cupmon_records::dump::LaunchProbe(Box::new(move || {
        Some(counter.load(std::sync::atomic::Ordering::Relaxed))
    })));
    for f in 0..5u64 {
        w.add_kernel_name(0x1000 + f * 0x40, &format!("_Z7kernel{f}v"))
            .unwrap();
    }
    for b in buffers {
        let mut rw = RecordWriter::new(layout);
        for r in b {
            rw.push(r);
        }
        let data = rw.into_bytes();
        let kernels = b.iter().filter(|r| matches!(r, Record::Kernel(_))).count();
        launched.fetch_add(kernels as u64, std::sync::atomic::Ordering::Relaxed);
        w.write_records(&data, layout, |index| index.native.last.max(T0))
            .unwrap();
    }
    w.finish().unwrap();
}

/// 10 s of work from T0: a 0.4 ms kernel every ms (100 buffers of 100), each under the
/// annotation of its second (CUSTOM1 external id 100 + s, "second s"), and every 100th
/// also with a CUSTOM0 (operator) id; a 1 MB copy every 100 ms.
pub fn ten_seconds(dir: &Path) {
    let mut buffers = Vec::new();
    let mut correlation = 0u32;
    for b in 0..100u64 {
        let mut buf = Vec::new();
        for i in b * 100..(b + 1) * 100 {
            let start = T0 + i * MS;
            correlation += 1;
            buf.push(kernel(
                start,
                start + 400_000,
                0,
                correlation,
                0x1000 + (i % 5) * 0x40,
            ));
            buf.push(Record::ExternalCorrelation(ExternalCorrelationRecord {
                kind: ActivityKind::EXTERNAL_CORRELATION,
                external_kind: 4,
                external_id: 100 + i / 1000,
                correlation_id: correlation,
            }));
            if i % 100 == 0 {
                buf.push(Record::ExternalCorrelation(ExternalCorrelationRecord {
                    kind: ActivityKind::EXTERNAL_CORRELATION,
                    external_kind: 3,
                    external_id: 9000 + i,
                    correlation_id: correlation,
                }));
                correlation += 1;
                buf.push(copy(start + 500_000, start + 900_000, 1 << 20, correlation));
            }
        }
        buffers.push(buf);
    }
    write_dump(dir, &buffers, policy(4 << 10, 1 << 40));
    let mut w = cupmon_records::dump::AnnotationLog::open(dir).unwrap();
    for s in 0..10u64 {
        w.append(100 + s, &format!("second {s}")).unwrap();
    }
}

/// `cupmon ARGS` with TZ set.
pub fn cupmon_tz(cwd: &Path, tz: &str, args: &[&str]) -> Output {
    let mut cmd = command(cwd, args);
    cmd.env("TZ", tz);
    Running::start(cmd).finish()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    dump: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let dump = dir.join("dump");
    ten_seconds(&dump);
    Setup {
        _tmp: tmp,
        dir,
        dump,
    }
}

/// The window of `cupmon decode DUMP ARGS -o NAME` under `tz`.
fn decode(s: &Setup, tz: &str, args: &[&str], name: &str) -> (Value, Output) {
    let dump = s.dump.to_str().unwrap();
    let mut all = vec!["decode", dump, "-o", name];
    all.extend_from_slice(args);
    let out = cupmon_tz(&s.dir, tz, &all);
    assert_success(&out);
    (read_json(&s.dir.join(name)), out)
}

fn slice_of(w: &Value) -> (Option<u64>, Option<u64>) {
    let s = &w["cupmon"]["slice"];
    (s["from_ns"].as_u64(), s["to_ns"].as_u64())
}

fn zone_installed(name: &str) -> bool {
    let there = Path::new("/usr/share/zoneinfo").join(name).exists();
    if !there {
        cupmon_test_skip::skipped!("/usr/share/zoneinfo/{name} is not installed (tzdata)");
    }
    there
}

#[test]
fn every_time_spec_form_picks_the_right_instant() {
    let s = setup();
    let want = T0 + 2 * S;
    let mut cases = vec![
        ("UTC", "+2"),
        ("UTC", "+2s"),
        ("UTC", "+2000ms"),
        ("UTC", "@1796135522"),
        ("UTC", "@1796135522.000"),
        ("UTC", "2026-12-01T14:32:02Z"),
        ("America/New_York", "2026-12-01T15:32:02+01:00"),
        ("UTC", "2026-12-01T14:32:02"),
        ("UTC", "14:32:02"),
    ];
    if zone_installed("America/New_York") {
        cases.push(("America/New_York", "2026-12-01T09:32:02"));
        cases.push(("America/New_York", "09:32:02"));
        cases.push(("America/New_York", "2026-12-01 09:32:02.000"));
    }
    for (i, (tz, spec)) in cases.iter().enumerate() {
        let (w, _) = decode(&s, tz, &["--from", spec], &format!("w{i}.json"));
        assert_eq!(slice_of(&w), (Some(want), None), "TZ={tz} --from {spec}");
        assert_eq!(w["start_ns"].as_u64(), Some(want), "TZ={tz} --from {spec}");
    }
    let (w, out) = decode(&s, "UTC", &["--from", "14:32:02.5", "--to", "+3"], "f.json");
    assert_eq!(slice_of(&w), (Some(T0 + 2500 * MS), Some(T0 + 3 * S)));
    let line = stdout(&out);
    assert!(
        line.contains("slice: 14:32:02.500 - 14:32:03.000 local (0.5 s), "),
        "{line}"
    );
    if zone_installed("America/New_York") {
        let (_, out) = decode(
            &s,
            "America/New_York",
            &["--from", "+2", "--to", "+3"],
            "g.json",
        );
        assert!(
            stdout(&out).contains("slice: 09:32:02.000 - 09:32:03.000 local"),
            "{}",
            stdout(&out)
        );
    }
}

/// The events of the full decode that a slice `[from, to)` must hold: the timed ones
/// overlapping it (buffer order), then the external correlations they name.
fn independent_filter(full: &Value, from: u64, to: Option<u64>) -> (Vec<Value>, Vec<Value>) {
    let events = full["events"].as_array().unwrap();
    let mut timed = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for e in events {
        let (Some(start), Some(end)) = (e["start_ns"].as_u64(), e["end_ns"].as_u64()) else {
            continue;
        };
        let end = end.max(start);
        let in_range =
            to.is_none_or(|t| start < t) && (end > from || (start == end && start >= from));
        if in_range {
            ids.insert(e["correlation_id"].as_u64().unwrap());
            timed.push(e.clone());
        }
    }
    let external = events
        .iter()
        .filter(|e| e["kind"] == "external_correlation")
        .filter(|e| ids.contains(&e["correlation_id"].as_u64().unwrap()))
        .cloned()
        .collect();
    (timed, external)
}

fn check_slice(full: &Value, sliced: &Value, from: u64, to: Option<u64>) -> usize {
    let (timed, external) = independent_filter(full, from, to);
    let events = sliced["events"].as_array().unwrap();
    let (got_external, got_timed): (Vec<&Value>, Vec<&Value>) = events
        .iter()
        .partition(|e| e["kind"] == "external_correlation");
    assert_eq!(got_timed, timed.iter().collect::<Vec<_>>());
    assert_eq!(got_external, external.iter().collect::<Vec<_>>());
    // Annotations: those the kept CUSTOM1 external correlations name.
    let mut want = serde_json::Map::new();
    for x in &external {
        if x["external_kind"] == 4 {
            let id = x["external_id"].to_string();
            want.insert(id.clone(), full["user_annotations"][&id].clone());
        }
    }
    assert_eq!(sliced["user_annotations"], Value::Object(want));
    timed.len()
}

#[test]
fn a_slice_holds_exactly_the_events_an_independent_filter_keeps() {
    let s = setup();
    let (full, _) = decode(&s, "UTC", &[], "full.json");
    assert_eq!(
        full["events"].as_array().unwrap().len(),
        10_000 * 2 + 100 + 100
    );
    // From inside kernel 2000 (it started at 2.0 s and is kept) to 3.5 s: two
    // annotations and 1,500 kernels.
    let (from, to) = (T0 + 2 * S + 200_000, T0 + 3500 * MS);
    let spec_from = "@1796135522.0002";
    let (w, out) = decode(&s, "UTC", &["--from", spec_from, "--to", "+3.5"], "s.json");
    assert_eq!(slice_of(&w), (Some(from), Some(to)));
    let timed = check_slice(&full, &w, from, Some(to));
    assert_eq!(timed, 1500 + 15);
    assert_eq!(w["user_annotations"].as_object().unwrap().len(), 2);
    let line = stdout(&out);
    let read: Vec<u64> = line
        .split(" segments read")
        .next()
        .and_then(|l| l.rsplit(", ").next())
        .map(|l| l.split(" of ").map(|n| n.parse().unwrap()).collect())
        .unwrap();
    assert!(read[0] < read[1] / 2, "segments read: {line}");

    // --last 1s: from one second before the last record's end, to the end.
    let last_end = T0 + 9999 * MS + 400_000;
    let (w, _) = decode(&s, "UTC", &["--last", "1s"], "l.json");
    assert_eq!(slice_of(&w), (Some(last_end - S), None));
    assert_eq!(check_slice(&full, &w, last_end - S, None), 1000 + 10);
}

/// Kernel and copy events of a Chrome trace: (name, start ns, args).
fn gpu_events(
    trace: &Value,
    from_ns: Option<u64>,
    to_ns: Option<u64>,
) -> Vec<(String, u64, Value)> {
    let base = trace["baseTimeNanoseconds"].as_u64().unwrap_or(0);
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" || e["cat"] == "gpu_memcpy")
        .map(|e| {
            let ts = (e["ts"].as_f64().unwrap() * 1000.0).round() as u64 + base;
            (
                e["name"].as_str().unwrap().to_owned(),
                ts,
                e["args"].clone(),
            )
        })
        .filter(|(_, ts, _)| {
            from_ns.is_none_or(|f| *ts + 400_000 > f) && to_ns.is_none_or(|t| *ts < t)
        })
        .collect()
}

#[test]
fn chrome_and_merged_traces_of_a_slice_hold_its_events_and_say_the_slice() {
    let s = setup();
    let (from, to) = (T0 + 5 * S, T0 + 5250 * MS);
    let dump = s.dump.to_str().unwrap();
    let out = cupmon_tz(
        &s.dir,
        "UTC",
        &["decode", dump, "--format", "chrome", "-o", "all.trace.json"],
    );
    assert_success(&out);
    let out = cupmon_tz(
        &s.dir,
        "UTC",
        &[
            "decode",
            dump,
            "--format",
            "chrome",
            "--from",
            "14:32:05",
            "--to",
            "+5.25",
            "-o",
            "s.trace.json",
        ],
    );
    assert_success(&out);
    let full = read_json(&s.dir.join("all.trace.json"));
    let sliced = read_json(&s.dir.join("s.trace.json"));
    let close = |a: &[(String, u64, Value)], b: &[(String, u64, Value)]| {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.0, y.0);
            assert!(x.1.abs_diff(y.1) <= 2, "{} vs {}", x.1, y.1);
            assert_eq!(x.2, y.2);
        }
    };
    let want = gpu_events(&full, Some(from), Some(to));
    assert_eq!(want.len(), 250 + 3);
    close(&gpu_events(&sliced, None, None), &want);
    assert_eq!(sliced["cupmon"]["slice"]["from_ns"].as_u64(), Some(from));
    assert_eq!(sliced["cupmon"]["slice"]["to_ns"].as_u64(), Some(to));
    let annotations: Vec<&str> = sliced["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "gpu_user_annotation")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(annotations, vec!["second 5"]);

    // Merged into a CPU trace: the same GPU events.
    let cpu = fixture("torch_mlp/kineto_cpu_trace.json");
    let out = cupmon_tz(
        &s.dir,
        "UTC",
        &[
            "decode",
            dump,
            "--cpu",
            cpu.to_str().unwrap(),
            "--from",
            "14:32:05",
            "--to",
            "+5.25",
            "-o",
            "m.json",
        ],
    );
    assert_success(&out);
    let merged = read_json(&s.dir.join("m.json"));
    assert_eq!(gpu_events(&merged, None, None).len(), want.len());
    assert_eq!(merged["cupmon"]["slice"]["from_ns"].as_u64(), Some(from));
}

#[test]
fn stats_of_a_slice_count_its_records() {
    let s = setup();
    let dump = s.dump.to_str().unwrap();
    let out = cupmon_tz(
        &s.dir,
        "UTC",
        &["stats", dump, "--from", "+1", "--to", "+2"],
    );
    assert_success(&out);
    let text = stdout(&out);
    // 1,000 kernels, their 1,000 + 10 external correlations, 10 copies.
    assert!(text.contains("records:         2020\n"), "{text}");
    assert!(
        text.contains("slice: 14:32:01.000 - 14:32:02.000 local (1.0 s)"),
        "{text}"
    );
    // The kernels launched in it, from the launch counter in its segment's digest.
    assert!(
        text.contains(
            "slice launches:  1000 kernels launched while its 1 segment(s) were open; 1000 \
             kernel records in the slice"
        ),
        "{text}"
    );
}

#[test]
fn bad_specs_and_empty_slices_are_errors_naming_the_flag() {
    let s = setup();
    let dump = s.dump.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["decode", dump, "-o", "out.json"];
        all.extend_from_slice(args);
        cupmon_tz(&s.dir, "UTC", &all)
    };
    // Bad specs: clap's message names the flag and the value, ours the forms.
    for (flag, bad) in [
        ("--from", "14:3x"),
        ("--to", "+soon"),
        ("--from", "2026-13-01T00:00Z"),
        ("--last", "0s"),
    ] {
        let out = run(&[flag, bad]);
        assert_eq!(out.status.code(), Some(2), "{flag} {bad}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(flag) && err.contains(bad), "{err}");
        if flag != "--last" {
            assert!(
                err.contains("HH:MM:SS[.fff]") && err.contains("@UNIX_SECONDS"),
                "{err}"
            );
        }
    }
    let out = run(&["--from", "+3", "--to", "14:32:02"]);
    assert_bad_input(
        &out,
        &[
            "--from +3",
            "is not before --to 14:32:02",
            "14:32:03.000 local",
        ],
    );
    let out = run(&["--from", "+20", "--to", "+21"]);
    assert_bad_input(
        &out,
        &[
            "no records in the slice 14:32:20.000 - 14:32:21.000 local",
            "the dump's records span 14:32:00.000 - 14:32:09.999 local",
        ],
    );
    let out = run(&["--last", "1s", "--from", "+1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--last") && stderr(&out).contains("--from"));
    assert!(
        !s.dir.join("out.json").exists(),
        "no output for a refused slice"
    );
}

#[test]
fn stats_says_which_segments_had_partial_digests() {
    let s = setup();
    let dump = s.dump.to_str().unwrap();
    let whole = cupmon_tz(&s.dir, "UTC", &["stats", dump]);
    assert_success(&whole);
    assert!(!stdout(&whole).contains("digests:"), "{}", stdout(&whole));
    // Segment 3's digest as a writer that fell behind CUPTI leaves it.
    let path = s
        .dump
        .join(cupmon_records::dump::SEGMENTS_DIR)
        .join(cupmon_records::digest::digest_file_name(3));
    let mut digest = read_json(&path);
    digest["skipped"] = serde_json::json!(5);
    std::fs::write(&path, digest.to_string()).unwrap();
    // As a cupmon before the seal wrote the index (no checksums): the edited digest
    // stands as the writer's own.
    let index = s
        .dump
        .join(cupmon_records::dump::SEGMENTS_DIR)
        .join("index.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&index)
        .unwrap()
        .lines()
        .map(|l| {
            let mut line: cupmon_records::dump::IndexLine = serde_json::from_str(l).unwrap();
            if let cupmon_records::dump::IndexLine::Closed(s) = &mut line {
                s.digest_xxh3 = None;
            }
            serde_json::to_string(&line).unwrap() + "\n"
        })
        .collect();
    std::fs::write(&index, lines.concat()).unwrap();
    let partial = cupmon_tz(&s.dir, "UTC", &["stats", dump]);
    assert_success(&partial);
    let text = stdout(&partial);
    assert!(
        text.contains("digests: 1 segment(s) read record by record: the dump writer was behind"),
        "{text}"
    );
    // The same numbers: the partial digest's records were read instead.
    let numbers = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with("digests:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(numbers(&text), numbers(&stdout(&whole)));
}

#[test]
fn a_report_on_a_period_says_the_kernels_launched_in_it() {
    let s = setup();
    let dump = s.dump.to_str().unwrap();
    let page = s.dir.join("r.html");
    let out = cupmon_tz(
        &s.dir,
        "UTC",
        &[
            "report",
            dump,
            "--from",
            "+1",
            "--to",
            "+2",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_success(&out);
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(
        html.contains("<dd id=\"period-launches\">1000</dd>"),
        "{html}"
    );
    assert!(html.contains("in this period: 1000 launched"));
    // The whole dump: the meta's account alone.
    let whole = s.dir.join("whole.html");
    let out = cupmon_tz(
        &s.dir,
        "UTC",
        &["report", dump, "-o", whole.to_str().unwrap()],
    );
    assert_success(&out);
    let html = std::fs::read_to_string(&whole).expect("the page");
    assert!(!html.contains("in this period"));
}
