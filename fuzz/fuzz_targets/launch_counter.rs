//! The launch counter's readings, from arbitrary bytes, put into a segmented dump's
//! digests by the writer (a reading at each segment's close, as the monitor's probe
//! gives them; a counter that goes back is what a forged digest or a restarted counter
//! looks like), then added up for the whole dump by `summarize` as `stats` and
//! `report` do. Never a panic; every closed segment is counted or said not to be.
#![no_main]

use std::path::Path;
use std::time::Duration;

use cupmon_records::digest::summarize;
use cupmon_records::dump::{list_segments, LaunchProbe, SegmentPolicy};
use cupmon_records::{
    ActivityKind, Dump, DumpWriter, KernelRecord, Layout, MetaFile, Record, RecordWriter, TimeRange,
};
use libfuzzer_sys::fuzz_target;

const T0: u64 = 1_796_135_520_000_000_000;

/// A segmented dump of 40 buffers of 50 kernels in small segments (durations
/// scattered, so that the frames do not compress to one segment), each with its
/// digest and the launch counter's `readings` (in turn, again from the first).
fn write_dump(dir: &Path, readings: Vec<Option<u64>>) {
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
    let mut w = DumpWriter::create_segmented(dir, &meta, policy).unwrap();
    let mut readings = readings.into_iter().cycle();
    w.count_launches_with(LaunchProbe(Box::new(move || readings.next().flatten())));
    w.add_kernel_name(0x1000, "_Z6kernelv").unwrap();
    for b in 0..40u64 {
        let mut rw = RecordWriter::new(layout);
        for i in b * 50..(b + 1) * 50 {
            let start = T0 + i * 1_000_000;
            let end = start + 400_000 + (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52);
            rw.push(&Record::Kernel(KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                start,
                end,
                completed: end,
                stream_id: 7,
                correlation_id: i as u32 + 1,
                grid_x: 1,
                grid_y: 1,
                grid_z: 1,
                block_x: 1,
                block_y: 1,
                block_z: 1,
                name_ptr: 0x1000,
                ..KernelRecord::default()
            }));
        }
        let data = rw.into_bytes();
        w.write_records(&data, layout, |index| index.native.last.max(T0))
            .unwrap();
    }
    w.finish().unwrap();
}

fuzz_target!(|data: &[u8]| {
    // 9 bytes a reading: a flag (odd: none) and the counter, little-endian.
    let readings: Vec<Option<u64>> = data
        .chunks_exact(9)
        .map(|r| (r[0] & 1 == 0).then(|| u64::from_le_bytes(r[1..9].try_into().unwrap())))
        .collect();
    if readings.is_empty() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("cupmon-fuzz-launches-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write_dump(&dir, readings);
    let list = list_segments(&dir).unwrap().expect("a segments folder");
    let dump = Dump::open(&dir).expect("the dump opens");
    let s = summarize(&dump, &TimeRange::new(None, None), |_| {}).expect("a summary");
    assert!(s.report.warnings.is_empty(), "{:?}", s.report.warnings);
    let l = s.launches;
    assert_eq!(
        l.segments_counted + l.segments_not_counted,
        list.live.len() as u64,
        "{l:?}"
    );
});
