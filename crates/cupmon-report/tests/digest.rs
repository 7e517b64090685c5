//! The segments' stored digests give the numbers the records give: `cupmon stats` and
//! every part of a report of a multi-segment dump, with its digests and with them
//! removed (the records walked instead), are equal.

use std::time::Duration;

use cupmon_records::digest::{digest_file_name, summarize};
use cupmon_records::dump::{IndexLine, SEGMENTS_DIR, SEGMENT_INDEX_FILE};
use cupmon_records::{dump_stats, Dump, TimeRange};
use cupmon_report::{build_report, run_span, Options, Report};

fn report_of(dir: &std::path::Path, options: &Options) -> Report {
    let dumps = vec![Dump::open(dir).unwrap()];
    let span = run_span(&dumps).unwrap();
    build_report("t", &dumps, span, options, &|_, _| {}).unwrap()
}

/// Remove the digests of `dir`'s segments; how many there were.
fn remove_digests(dir: &std::path::Path) -> usize {
    let segments = dir.join(SEGMENTS_DIR);
    (1..1000)
        .filter(|&i| std::fs::remove_file(segments.join(digest_file_name(i))).is_ok())
        .count()
}

/// `segments/index.jsonl` as a cupmon before the seal wrote it (no checksums), so that
/// a digest edited here stands as the writer's own.
fn without_digest_checksums(dir: &std::path::Path) {
    let path = dir.join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let mut parsed: IndexLine = serde_json::from_str(line).unwrap();
        if let IndexLine::Closed(s) = &mut parsed {
            s.digest_xxh3 = None;
        }
        out += &serde_json::to_string(&parsed).unwrap();
        out.push('\n');
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn stats_and_reports_from_digests_equal_those_from_records() {
    let tmp = tempfile::tempdir().unwrap();
    // 2 ranks, 600 steps of 100 ms (a minute), segments of about 4 KiB: many segments.
    let job = crate::common::job(2, 600, 100_000_000, 1, 200..260, 1.5);
    let dir = crate::common::write_rank_in(tmp.path(), 1, 2, &job[1], 10, 4096);
    let options = Options {
        bin: Some(Duration::from_secs(1)),
        top: usize::MAX,
        threads: 1,
        ..Options::default()
    };
    let dump = Dump::open(&dir).unwrap();
    let live = dump.segments().unwrap().live.len();
    assert!(live >= 5, "{live} segments");
    let digested = summarize(&dump, &TimeRange::default(), |_| {}).unwrap();
    assert_eq!(
        digested.segments_digested as usize, live,
        "every closed segment"
    );
    let stats = dump_stats(&dir, usize::MAX, |_| {}).unwrap();
    let report = report_of(&dir, &options);
    // A slice that cuts segments: digests inside, records at its ends.
    let first = stats.first_ns.unwrap();
    let slice = TimeRange::new(Some(first + 10_300_000_000), Some(first + 47_700_000_000));
    let sliced = summarize(&dump, &slice, |_| {}).unwrap();
    assert!(sliced.segments_digested > 0 && (sliced.segments_digested as usize) < live);
    let slice_report = report_of(
        &dir,
        &Options {
            range: slice,
            ..options.clone()
        },
    );

    assert_eq!(remove_digests(&dir), live);
    let dump = Dump::open(&dir).unwrap();
    let walked = summarize(&dump, &TimeRange::default(), |_| {}).unwrap();
    assert_eq!(walked.segments_digested, 0);
    let mut from_digests = stats.clone();
    from_digests.report.segments_digested = 0;
    assert_eq!(dump_stats(&dir, usize::MAX, |_| {}).unwrap(), from_digests);
    let sliced_walk = summarize(&dump, &slice, |_| {}).unwrap();
    assert_eq!(
        sliced_walk.digest.kernels, sliced.digest.kernels,
        "slice: kernels"
    );
    assert_eq!(
        sliced_walk.report.records, sliced.report.records,
        "slice: records"
    );
    let walked_report = report_of(&dir, &options);
    let walked_slice = report_of(
        &dir,
        &Options {
            range: slice,
            ..options.clone()
        },
    );
    for (a, b, what) in [
        (&report, &walked_report, "whole dump"),
        (&slice_report, &walked_slice, "slice"),
    ] {
        let (p, q) = (&a.processes[0], &b.processes[0]);
        assert!(p.stats.report.segments_digested > 0, "{what}: digests read");
        let mut from_digests = p.stats.clone();
        from_digests.report.segments_digested = 0;
        assert_eq!(from_digests, q.stats, "{what}: stats");
        assert_eq!(p.timeline, q.timeline, "{what}: timeline");
        assert_eq!(p.nccl, q.nccl, "{what}: NCCL timeline");
        assert_eq!(p.durations, q.durations, "{what}: durations");
        assert_eq!(p.copies, q.copies, "{what}: copies");
        assert_eq!(p.streams, q.streams, "{what}: streams");
        assert_eq!(a.kernels, b.kernels, "{what}: kernel table");
    }
    assert!(report.processes[0]
        .timeline
        .bins
        .iter()
        .any(|b| b.busy_ns.iter().any(|&x| x > 0)));
}

#[test]
fn a_partial_digest_is_not_used_and_is_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let job = crate::common::job(1, 300, 100_000_000, 1, 200..260, 1.5);
    let dir = crate::common::write_rank_in(tmp.path(), 0, 1, &job[0], 10, 4096);
    let whole = dump_stats(&dir, usize::MAX, |_| {}).unwrap();
    let live = whole.report.segments_digested;
    assert!(live >= 3, "{live} digested segments");
    // Segment 2's digest as a writer that fell behind leaves it: some records skipped.
    let path = dir.join(SEGMENTS_DIR).join(digest_file_name(2));
    let mut digest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    digest["skipped"] = serde_json::json!(17);
    std::fs::write(&path, digest.to_string()).unwrap();
    without_digest_checksums(&dir);
    let partial = dump_stats(&dir, usize::MAX, |_| {}).unwrap();
    assert_eq!(partial.report.segments_digest_partial, 1);
    assert_eq!(
        partial.report.segments_digested,
        live - 1,
        "its records read instead"
    );
    let mut expected = whole.clone();
    expected.report.segments_digested = live - 1;
    expected.report.segments_digest_partial = 1;
    assert_eq!(partial, expected, "the same numbers from the records");
    // A slice after segment 2 does not need it: nothing to say about its digest.
    let dump = Dump::open(&dir).unwrap();
    let seg2 = dump
        .segments()
        .unwrap()
        .live
        .iter()
        .find(|f| f.segment == 2)
        .cloned();
    let after = seg2
        .and_then(|f| f.summary)
        .and_then(|s| s.last_ns)
        .unwrap()
        + 1;
    let later = summarize(&dump, &TimeRange::new(Some(after), None), |_| {}).unwrap();
    assert_eq!(later.report.segments_digest_partial, 0);
}
