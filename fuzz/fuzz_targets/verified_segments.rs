//! The marks of verified segments (`<dump id>.verified` in the user's cache) from
//! arbitrary bytes, read as `stats` and `report` read them through `summarize` over a
//! real segmented dump whose digests carry the launch counter. Never a panic; the
//! marks file only saves verifying, so whatever it holds (garbage, the true marks,
//! both), the summary's counts and launches are the same as with no marks at all.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cupmon_records::digest::{remember_verified_segments_in, summarize, SliceLaunches};
use cupmon_records::dump::{LaunchProbe, SegmentPolicy};
use cupmon_records::{
    ActivityKind, Dump, DumpWriter, KernelRecord, Layout, MetaFile, Record, RecordWriter, TimeRange,
};
use libfuzzer_sys::fuzz_target;

const T0: u64 = 1_796_135_520_000_000_000;

struct Scratch {
    dump: PathBuf,
    /// The dump's marks file, and the marks a first `summarize` wrote there.
    marks: PathBuf,
    true_marks: Vec<u8>,
    /// What a summary with no marks counts.
    expected: (u64, u64, SliceLaunches),
}

/// A segmented dump of 20 buffers of 50 kernels in small segments, each with its
/// digest and launch counter, as the monitor writes them.
fn write_dump(dir: &Path) {
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
    let launched = Arc::new(AtomicU64::new(0));
    let counter = launched.clone();
    w.count_launches_with(LaunchProbe(Box::new(move || {
        Some(counter.load(Ordering::Relaxed))
    })));
    w.add_kernel_name(0x1000, "_Z6kernelv").unwrap();
    for b in 0..20u64 {
        let mut rw = RecordWriter::new(layout);
        for i in b * 50..(b + 1) * 50 {
            let start = T0 + i * 1_000_000;
            rw.push(&Record::Kernel(KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                start,
                end: start + 400_000,
                completed: start + 400_000,
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
        launched.fetch_add(50, Ordering::Relaxed);
        w.write_records(&data, layout, |index| index.native.last.max(T0))
            .unwrap();
    }
    w.finish().unwrap();
}

fn counts(dump: &Path) -> (u64, u64, SliceLaunches) {
    let dump = Dump::open(dump).expect("the dump opens");
    let s = summarize(&dump, &TimeRange::new(None, None), |_| {}).expect("a summary");
    assert!(s.report.warnings.is_empty(), "{:?}", s.report.warnings);
    (s.digest.records, s.segments_digested, s.launches)
}

fn scratch() -> &'static Scratch {
    static SCRATCH: OnceLock<Scratch> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cupmon-fuzz-marks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (dump, cache) = (dir.join("dump"), dir.join("cache"));
        std::fs::create_dir_all(&cache).unwrap();
        write_dump(&dump);
        let expected = counts(&dump);
        assert!(
            expected.1 >= 2,
            "digests stand for closed segments: {expected:?}"
        );
        assert!(expected.2.segments_counted >= 2, "{expected:?}");
        remember_verified_segments_in(cache.clone());
        // The first summary with a marks directory verifies and marks the segments.
        assert_eq!(counts(&dump), expected);
        let marks = std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .next()
            .expect("a marks file for the dump");
        let true_marks = std::fs::read(&marks).unwrap();
        assert!(!true_marks.is_empty());
        Scratch {
            dump,
            marks,
            true_marks,
            expected,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let s = scratch();
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    // The input alone, or with the true marks before or after it.
    let mut file = Vec::new();
    if mode % 3 == 1 {
        file.extend_from_slice(&s.true_marks);
    }
    file.extend_from_slice(bytes);
    if mode % 3 == 2 {
        file.extend_from_slice(&s.true_marks);
    }
    std::fs::write(&s.marks, &file).unwrap();
    assert_eq!(counts(&s.dump), s.expected);
});
