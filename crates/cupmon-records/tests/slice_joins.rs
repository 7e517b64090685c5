//! A slice's join of its timeless records (external correlations) with the kept
//! records: a join window too small for the slice's kernels must warn only when
//! an external correlation actually went unmatched, not for every kernel id the
//! window let go (an H200 run of 96 M kernels without a single external
//! correlation warned of 93.9 M).

use cupmon_records::{
    ActivityKind, Dump, ExternalCorrelationRecord, Record, Reorder, SliceWalk, TimeRange,
};

use crate::time_span::{encode, kernel, write_segmented};

const T0: u64 = 1_796_135_520_000_000_000;

/// Ten buffers of 100 kernels 1 ms apart; with `external`, each buffer also holds
/// the external correlation of its first kernel.
fn dump(dir: &std::path::Path, external: bool) {
    let bufs: Vec<Vec<u8>> = (0..10u64)
        .map(|b| {
            let mut records: Vec<Record> = (b * 100..(b + 1) * 100)
                .map(|i| {
                    let start = T0 + i * 1_000_000;
                    kernel(start, start + 400_000, 0, i as u32 + 1)
                })
                .collect();
            if external {
                records.push(Record::ExternalCorrelation(ExternalCorrelationRecord {
                    kind: ActivityKind::EXTERNAL_CORRELATION,
                    external_kind: 3,
                    external_id: 77 + b,
                    correlation_id: (b * 100) as u32 + 1,
                }));
            }
            encode(&records)
        })
        .collect();
    write_segmented(dir, &bufs, 1 << 30).finish().unwrap();
}

/// Records the walk gives, external correlations among them, and the report's
/// count of joins the full window may have cost.
fn walk(dir: &std::path::Path, max_pending: usize) -> (u64, u64, u64) {
    let dump = Dump::open(dir).unwrap();
    // The middle of the dump: buffers 2 to 7.
    let range = TimeRange::new(Some(T0 + 200_000_000), Some(T0 + 800_000_000));
    let reorder = Reorder {
        max_pending,
        ..Reorder::default()
    };
    let mut walk = SliceWalk::open(&dump, &range, reorder).unwrap();
    let (mut records, mut external) = (0, 0);
    while let Some(rs) = walk.next_buffer().unwrap() {
        records += rs.len() as u64;
        external += rs
            .iter()
            .filter(|w| matches!(w.record, Record::ExternalCorrelation(_)))
            .count() as u64;
    }
    (records, external, walk.finish().joins_evicted)
}

#[test]
fn a_full_join_window_warns_only_of_external_correlations_it_cost() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, with) = (tmp.path().join("plain"), tmp.path().join("with"));
    dump(&plain, false);
    dump(&with, true);
    // A window large enough: every kept kernel's external correlation joins.
    assert_eq!(walk(&with, 1 << 20), (600 + 6, 6, 0));
    // No external correlations: a window of 10 ids lets hundreds go, harmlessly.
    assert_eq!(walk(&plain, 10), (600, 0, 0));
    // The window of 10 holds only the lead's newest ids: each external
    // correlation names a kernel a buffer back, let go early, and is counted.
    let (records, external, missed) = walk(&with, 10);
    assert_eq!(records, 600 + external);
    assert_eq!(missed, 6 - external);
    assert!(missed > 0, "the small window cost some joins");
}
