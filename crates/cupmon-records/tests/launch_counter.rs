//! The launch counter's readings in segment digests, added up for a slice.

use std::time::Duration;

use cupmon_records::digest::summarize;
use cupmon_records::dump::{LaunchProbe, SegmentPolicy};
use cupmon_records::{
    ActivityKind, Dump, DumpWriter, KernelRecord, Layout, MetaFile, Record, RecordWriter, TimeRange,
};

const T0: u64 = 1_764_567_890_000_000_000;

/// A counter that goes back (a forged digest, a counter restarted) can give two
/// segments spans that add past u64: the slice's launches saturate, never overflow
/// (a panic in a debug build, a wrapped count in a release one).
#[test]
fn a_launch_counter_that_goes_back_does_not_overflow_the_slice_launches() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dump");
    let mut meta = MetaFile::new();
    meta.set("cupti_version", 130_000)
        .set("buffer_size", 1 << 20)
        .set("session_open", false);
    let policy = SegmentPolicy {
        segment_size: 4 << 10,
        segment_period: Duration::from_secs(3600),
        keep: 1 << 40,
        keep_for: None,
    };
    let layout = Layout::cupti_13_0();
    let mut w = DumpWriter::create_segmented(&dir, &meta, policy).unwrap();
    // Read at each close: u64::MAX, 0, u64::MAX, ... (each open is the last close).
    let mut readings = 0u64;
    w.count_launches_with(LaunchProbe(Box::new(move || {
        readings += 1;
        Some(if readings % 2 == 1 { u64::MAX } else { 0 })
    })));
    // Buffers of 50 kernels; a segment rolls past 4 KiB (the smallest it may be).
    // (Durations scattered, so that the frames do not compress to nothing.)
    for b in 0..40u64 {
        let mut rw = RecordWriter::new(layout);
        for i in b * 50..(b + 1) * 50 {
            let end = T0 + i * 10_000 + (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52);
            rw.push(&Record::Kernel(KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                start: T0 + i * 10_000,
                end,
                completed: end,
                correlation_id: i as u32 + 1,
                name_ptr: 0x1000 + (i % 5) * 0x40,
                ..KernelRecord::default()
            }));
        }
        let data = rw.into_bytes();
        w.write_records(&data, layout, |index| index.native.last.max(T0))
            .unwrap();
    }
    w.finish().unwrap();
    let dump = Dump::open(&dir).unwrap();
    let s = summarize(&dump, &TimeRange::new(None, None), |_| {}).unwrap();
    assert!(s.launches.segments_counted >= 3, "{:?}", s.launches);
    assert_eq!(s.launches.kernels_launched, u64::MAX);
}
