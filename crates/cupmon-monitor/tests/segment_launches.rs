//! The launch counter in each segment's digest (issue 27): a slice of the past says
//! how many kernels were launched in it, not only the whole session.

use std::time::Duration;

use cupmon_monitor::{Monitor, MonitorConfig};
use cupmon_records::digest::{read_digest, summarize, Digest};
use cupmon_records::dump::SEGMENTS_DIR;
use cupmon_records::{Dump, TimeRange};
use cupmon_test_support::exclusive;

use crate::common::{config, fake};

/// Segments that roll at every buffer written, so a few launches make several.
fn rolling_config(dir: &std::path::Path) -> MonitorConfig {
    let mut c = config(dir);
    c.segment_period = Duration::from_nanos(1);
    c
}

/// The stored digest of every segment, oldest first.
fn segment_digests(dump_dir: &std::path::Path) -> Vec<Digest> {
    let dump = Dump::open(dump_dir).expect("dump");
    let list = dump.segments().expect("a segmented dump");
    list.live
        .iter()
        .map(|f| read_digest(&dump_dir.join(SEGMENTS_DIR), f.segment).expect("digest"))
        .collect()
}

#[test]
fn each_segment_digest_counts_the_launches_while_it_was_open() {
    let _x = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let monitor = Monitor::start_with(cupti, rolling_config(dir.path())).expect("start");
    for batch in 0..4 {
        fake.launch_kernels(100 + batch, 7, "k").unwrap();
        monitor.flush(true).expect("flush");
    }
    let (stats, _) = monitor.stop().expect("stop");
    let launched = 100 + 101 + 102 + 103;
    assert_eq!(stats.kernels_launched, Some(launched), "{stats:?}");
    let digests = segment_digests(&dir.path().join("dump"));
    assert!(digests.len() >= 2, "the segments rolled: {}", digests.len());
    let spans: Vec<_> = digests
        .iter()
        .map(|d| d.launch_counter.expect("every segment counted"))
        .collect();
    // From the count's start to its end, each segment opening where the last closed.
    assert_eq!(spans[0].at_open, 0, "{spans:?}");
    assert_eq!(spans.last().unwrap().at_close, launched, "{spans:?}");
    for pair in spans.windows(2) {
        assert_eq!(pair[0].at_close, pair[1].at_open, "{spans:?}");
    }
    let per_segment: u64 = spans.iter().map(|s| s.kernels_launched()).sum();
    assert_eq!(per_segment, launched);
    // A slice of all of it: every segment counted, the session's launches.
    let dump = Dump::open(dir.path().join("dump")).expect("dump");
    let summary = summarize(&dump, &TimeRange::default(), |_| {}).expect("summarize");
    assert_eq!(
        summary.launches.all_counted(),
        Some(launched),
        "{:?}",
        summary.launches
    );
    // A slice from the second segment on: its segments' launches, fewer than all.
    let from = digests[1].first_ns.expect("timed records");
    let later = summarize(&dump, &TimeRange::new(Some(from), None), |_| {}).expect("slice");
    assert_eq!(
        later.launches.all_counted(),
        Some(launched - spans[0].kernels_launched()),
        "{:?}",
        later.launches
    );
}

#[test]
fn segments_of_a_session_that_did_not_count_say_not_counted() {
    let _x = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let mut c = rolling_config(dir.path());
    c.count_launches = false;
    let monitor = Monitor::start_with(cupti, c).expect("start");
    fake.launch_kernels(50, 7, "k").unwrap();
    monitor.flush(true).expect("flush");
    monitor.stop().expect("stop");
    let digests = segment_digests(&dir.path().join("dump"));
    assert!(!digests.is_empty());
    assert!(digests.iter().all(|d| d.launch_counter.is_none()));
    let dump = Dump::open(dir.path().join("dump")).expect("dump");
    let summary = summarize(&dump, &TimeRange::default(), |_| {}).expect("summarize");
    assert_eq!(summary.launches.all_counted(), None);
    assert_eq!(summary.launches.segments_not_counted, digests.len() as u64);
}

#[test]
fn a_digest_written_before_launch_counting_reads_as_not_counted() {
    // A digest of the version before the counter: no `launch_counter` key.
    let old = serde_json::json!({
        "version": 1, "chunks": 1, "buffer_bytes": 10, "records": 0,
        "records_by_kind": {}, "first_ns": null, "last_ns": null, "zero_start": 0,
        "foreign": 0, "skipped": 0, "kernels": [], "memcpy_bytes": 0,
        "copies": cupmon_records::digest::copies::CopyStats::default(),
        "collectives": cupmon_records::nccl::CollectiveStats::default(),
        "streams": [], "bins": null, "nccl_bins": null, "unbinned": 0
    });
    let digest: Digest = serde_json::from_value(old).expect("an old digest reads");
    assert_eq!(digest.launch_counter, None);
}
