//! Whatever order and overlap slices come in, every one of them comes back
//! out of trace processor's pairing (BEGIN/END sorted by time, ties in file
//! order) with its own start and end: none dropped, none re-paired.

use crate::common::{decode, model, paired_slices};
use cupmon_pftrace::{PftraceWriter, Slice, WriterOptions};
use proptest::prelude::*;

fn round_trip(slices: &[(u64, u64)], window: usize) -> (Vec<(u64, u64, String)>, u64) {
    let opts = WriterOptions {
        realtime_now_ns: Some(0),
        reorder_window: window,
        max_lanes: 64,
        ..WriterOptions::default()
    };
    let mut w = PftraceWriter::with_options(Vec::new(), opts).unwrap();
    let t = w.thread(1, 7, "stream 7 ", 7).unwrap();
    for (i, &(start, dur)) in slices.iter().enumerate() {
        w.slice(t, &Slice::new(start, dur, &format!("s{i}")))
            .unwrap();
    }
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(summary.forced_slices, 0);
    let mut out: Vec<_> = paired_slices(&model(&decode(&bytes)))
        .into_iter()
        .map(|s| (s.start, s.end, s.name))
        .collect();
    out.sort();
    (out, summary.overlap_slices)
}

fn expected(slices: &[(u64, u64)]) -> Vec<(u64, u64, String)> {
    let mut e: Vec<_> = slices
        .iter()
        .enumerate()
        .map(|(i, &(s, d))| (s, s + d, format!("s{i}")))
        .collect();
    e.sort();
    e
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_slice_comes_back_whole(
        // Small times so that ties (same start, same end, end == start) are common.
        slices in prop::collection::vec((0u64..40, 0u64..15), 1..40),
        window in prop::sample::select(vec![0usize, 3, 256]),
    ) {
        let (out, _) = round_trip(&slices, window);
        prop_assert_eq!(out, expected(&slices));
    }
}

#[test]
fn well_nested_slices_in_any_order_need_no_overlap_track_within_the_window() {
    // A parent, two children, a grandchild, a sibling: given backwards.
    let slices = [(0, 100), (10, 30), (15, 5), (50, 40), (100, 10)];
    let reversed: Vec<_> = slices.iter().rev().copied().collect();
    let (out, overlaps) = round_trip(&reversed, 256);
    assert_eq!(out, expected(&reversed));
    assert_eq!(overlaps, 0);
    // Without a window the late parents go to overlap tracks, still whole.
    let (out, overlaps) = round_trip(&reversed, 0);
    assert_eq!(out, expected(&reversed));
    assert!(overlaps > 0);
}
