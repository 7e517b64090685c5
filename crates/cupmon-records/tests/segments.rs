//! The flight recorder's dump: segments of frames written by `DumpWriter`, read back
//! record for record, retired within the budget, sliced by time with the index, and
//! readable after a kill or with a damaged frame.

use std::path::Path;
use std::time::Duration;

use cupmon_records::dump::{
    list_segments, BufferCompletion, DumpWarning, FrameIndex, SegmentPolicy, SEGMENTS_DIR,
};
use cupmon_records::{
    walk_slice, ActivityKind, DecodeReport, Dump, DumpWriter, ExternalCorrelationRecord,
    KernelRecord, Layout, MetaFile, Record, RecordIter, RecordWriter, TimeRange,
};

use crate::common::{decode_all, fixture_dir};

const T0: u64 = 1_764_567_890_000_000_000;

fn meta() -> MetaFile {
    let mut m = MetaFile::new();
    m.set("cupti_version", 130_000)
        .set("buffer_size", 1 << 20)
        .set("session_open", false)
        .set("dropped_records", 0)
        .set("chunks_written", 0);
    m
}

fn kernel(i: u64) -> Record {
    // A kernel every 10 us, 4-4.5 us long; correlation ids count up.
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    let jitter = x % 500;
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start: T0 + i * 10_000,
        end: T0 + i * 10_000 + 4_000 + jitter,
        completed: T0 + i * 10_000 + 4_000 + jitter,
        correlation_id: i as u32 + 1,
        stream_id: 7,
        device_id: 0,
        grid_x: 128,
        block_x: 256,
        name_ptr: 0x1000 + (i % 5) * 0x40,
        ..KernelRecord::default()
    })
}

/// `buffers` buffers of `per` kernels each (every 10th kernel with its external id).
fn buffers(buffers: u64, per: u64) -> Vec<Vec<u8>> {
    let layout = Layout::cupti_13_0();
    (0..buffers)
        .map(|b| {
            let mut w = RecordWriter::new(layout);
            for i in b * per..(b + 1) * per {
                w.push(&kernel(i));
                if i % 10 == 0 {
                    w.push(&Record::ExternalCorrelation(ExternalCorrelationRecord {
                        kind: ActivityKind::EXTERNAL_CORRELATION,
                        external_kind: 2,
                        external_id: 5000 + i,
                        correlation_id: i as u32 + 1,
                    }));
                }
            }
            w.as_bytes().to_vec()
        })
        .collect()
}

fn index_of(data: &[u8]) -> FrameIndex {
    let mut index = FrameIndex::default();
    for r in RecordIter::new(data, Layout::cupti_13_0()) {
        index.add(&r.unwrap());
    }
    index
}

fn completion(i: usize) -> BufferCompletion {
    BufferCompletion {
        stream_id: 0,
        context: 0,
        cupti_completed_ns: T0 + i as u64 * 1_000_000,
        unix_completed_ns: T0 + i as u64 * 1_000_000,
    }
}

/// A segmented dump of `bufs` in `dir`; the writer is returned unfinished.
fn write_segmented(dir: &Path, bufs: &[Vec<u8>], policy: SegmentPolicy) -> DumpWriter {
    let mut w = DumpWriter::create_segmented(dir, &meta(), policy).unwrap();
    for (i, b) in bufs.iter().enumerate() {
        w.write_buffer(
            completion(i),
            b,
            Some(Layout::cupti_13_0()),
            &index_of(b),
            false,
        )
        .unwrap();
    }
    w
}

fn policy(segment_size: u64, keep: u64) -> SegmentPolicy {
    SegmentPolicy {
        segment_size,
        segment_period: Duration::from_secs(3600),
        keep,
        keep_for: None,
    }
}

fn slice(dir: &Path, range: TimeRange) -> (Vec<Record>, DecodeReport) {
    let dump = Dump::open(dir).unwrap();
    let mut out = Vec::new();
    let report = walk_slice(&dump, &range, |_| {}, |_, _, r| out.push(r.clone())).unwrap();
    (out, report)
}

#[test]
fn a_segmented_dump_reads_back_record_for_record_and_is_smaller() {
    let tmp = tempfile::tempdir().unwrap();
    let bufs = buffers(40, 2000);
    write_segmented(tmp.path(), &bufs, policy(32 << 10, 1 << 30))
        .finish()
        .unwrap();
    let expected: Vec<Record> = bufs
        .iter()
        .flat_map(|b| RecordIter::new(b, Layout::cupti_13_0()).map(Result::unwrap))
        .collect();
    let (records, report) = decode_all(tmp.path()).unwrap();
    assert_eq!(records, expected);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let list = list_segments(tmp.path()).unwrap().unwrap();
    assert!(
        list.live.len() > 1,
        "rolled into several segments: {list:?}"
    );
    assert!(list.live.iter().all(|f| f.summary.is_some()), "all closed");
    let raw: u64 = bufs.iter().map(|b| b.len() as u64).sum();
    let on_disk = Dump::open(tmp.path()).unwrap().buffer_file_bytes();
    assert!(on_disk * 10 < raw, "{on_disk} bytes on disk for {raw} raw");
}

#[test]
fn the_fixture_recordings_survive_the_segment_writer() {
    for name in crate::common::FIXTURES {
        let (want, _) = decode_all(fixture_dir(name)).unwrap();
        let src = Dump::open(fixture_dir(name)).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let layout = src.layout().unwrap();
        let mut w =
            DumpWriter::create_segmented(tmp.path(), src.meta(), policy(1 << 20, 1 << 30)).unwrap();
        let mut chunks = src.chunks().unwrap();
        while let Some(c) = chunks.next_chunk().unwrap() {
            let mut index = FrameIndex::default();
            for r in RecordIter::new(c.data, layout).flatten() {
                index.add(&r);
            }
            w.write_buffer(c.header.completion, c.data, Some(layout), &index, false)
                .unwrap();
        }
        w.finish().unwrap();
        for f in [
            "kernel_names.tsv",
            "user_annotations.json",
            "user_annotations.jsonl",
        ] {
            let _ = std::fs::copy(fixture_dir(name).join(f), tmp.path().join(f));
        }
        let (got, report) = decode_all(tmp.path()).unwrap();
        assert_eq!(got.len(), want.len(), "{name}: {report:?}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            if g != w {
                for j in i.saturating_sub(3)..i + 3 {
                    eprintln!(
                        "{j}: got {:?} {:?}\n    want {:?} {:?}",
                        got[j].kind(),
                        got[j].interval(),
                        want[j].kind(),
                        want[j].interval()
                    );
                }
            }
            assert_eq!(g, w, "{name}: record {i}");
        }
    }
}

#[test]
fn retirement_keeps_the_budget_and_says_what_went() {
    let tmp = tempfile::tempdir().unwrap();
    let bufs = buffers(100, 2000);
    let keep = 256 << 10;
    let mut w = DumpWriter::create_segmented(tmp.path(), &meta(), policy(32 << 10, keep)).unwrap();
    let mut most = 0;
    for (i, b) in bufs.iter().enumerate() {
        w.write_buffer(
            completion(i),
            b,
            Some(Layout::cupti_13_0()),
            &index_of(b),
            false,
        )
        .unwrap();
        w.flush().unwrap();
        most = most.max(dir_bytes(tmp.path()));
    }
    let retired = w.finish().unwrap();
    let roll = policy(32 << 10, keep).roll_size();
    assert!(
        most <= keep + roll,
        "the dump reached {most} bytes, budget {keep}"
    );
    assert!(retired.segments > 0 && retired.records > 0);
    let dump = Dump::open(tmp.path()).unwrap();
    assert_eq!(dump.retired(), retired);
    assert!(dump
        .warnings()
        .iter()
        .any(|w| matches!(w, DumpWarning::Retired(_))));
    // What is left is the newest data, whole: the last buffer's records are all there.
    let (records, report) = decode_all(tmp.path()).unwrap();
    let total: u64 = 100 * 2200;
    assert_eq!(records.len() as u64 + retired.records, total);
    assert_eq!(report.retired, retired);
    assert_eq!(
        records.last(),
        RecordIter::new(&bufs[99], Layout::cupti_13_0())
            .last()
            .map(Result::unwrap)
            .as_ref()
    );
    // The retired span ends before the first kept record starts.
    let first_kept = records.iter().filter_map(Record::time).min().unwrap();
    assert!(retired.last_ns.unwrap() < first_kept);
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    for d in [dir.to_path_buf(), dir.join(SEGMENTS_DIR)] {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_file() {
                n += m.len();
            }
        }
    }
    n
}

#[test]
fn a_slice_returns_exactly_the_overlapping_records_and_skips_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let bufs = buffers(100, 1000);
    write_segmented(tmp.path(), &bufs, policy(8 << 10, 1 << 30))
        .finish()
        .unwrap();
    let (all, _) = decode_all(tmp.path()).unwrap();
    // Kernel 50_000 starts at T0 + 0.5 s; take [0.5 s + 2 us, 0.6 s).
    let from = T0 + 500_000_000 + 2_000;
    let to = T0 + 600_000_000;
    let range = TimeRange::new(Some(from), Some(to));
    let (got, report) = slice(tmp.path(), range);
    let kernels: Vec<&Record> = all
        .iter()
        .filter(|r| r.interval().is_some_and(|(s, e)| range.overlaps(s, e)))
        .collect();
    let ids: std::collections::HashSet<u32> = kernels.iter().map(|r| r.correlation_id()).collect();
    let externals: Vec<&Record> = all
        .iter()
        .filter(|r| r.interval().is_none() && ids.contains(&r.correlation_id()))
        .collect();
    // Kernel 50_000 (ends 2 us after from) is in, as the interval overlaps.
    assert_eq!(kernels.len(), 10_000);
    assert_eq!(externals.len(), 1_000);
    // In buffer order, the external correlations where they were written.
    let want: Vec<&Record> = all
        .iter()
        .filter(|r| match r.interval() {
            Some((s, e)) => range.overlaps(s, e),
            None => ids.contains(&r.correlation_id()),
        })
        .collect();
    assert_eq!(want.len(), kernels.len() + externals.len());
    assert!(
        got.iter().eq(want.iter().copied()),
        "not the records of the slice in order"
    );
    assert!(report.segments_skipped > 0, "{report:?}");
    assert!(report.chunks < 20, "read {} buffers of 100", report.chunks);
    // An empty slice reads nothing.
    let (none, report) = slice(tmp.path(), TimeRange::new(Some(T0 + 10_000_000_000), None));
    assert!(none.is_empty());
    assert_eq!(report.chunks, 0);
}

#[test]
fn a_killed_writer_leaves_a_readable_active_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let bufs = buffers(10, 1000);
    let mut w = write_segmented(tmp.path(), &bufs, policy(64 << 20, 1 << 30));
    w.flush().unwrap();
    std::mem::forget(w);
    let list = list_segments(tmp.path()).unwrap().unwrap();
    assert_eq!(list.live.len(), 1);
    assert!(list.live[0].summary.is_none(), "never closed");
    let (records, _) = decode_all(tmp.path()).unwrap();
    assert_eq!(records.len(), 11_000);
    // And a slice of it works from the frames' own index.
    let (got, _) = slice(tmp.path(), TimeRange::new(Some(T0), Some(T0 + 10_000)));
    assert_eq!(got.len(), 2, "kernel 0 and its external correlation");
    // Cut the file inside its last frame: the frames before it stay.
    let path = &list.live[0].path;
    let len = std::fs::metadata(path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len - 100).unwrap();
    let (records, report) = decode_all(tmp.path()).unwrap();
    assert_eq!(records.len(), 9_900);
    assert!(
        matches!(report.warnings[..], [DumpWarning::Truncated(_)]),
        "{:?}",
        report.warnings
    );
}

#[test]
fn a_damaged_frame_is_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let bufs = buffers(3, 1000);
    write_segmented(tmp.path(), &bufs, policy(64 << 20, 1 << 30))
        .finish()
        .unwrap();
    let path = list_segments(tmp.path()).unwrap().unwrap().live[0]
        .path
        .clone();
    let mut bytes = std::fs::read(&path).unwrap();
    // Inside the first frame's compact header (after the 48-byte chunk header, the
    // 40-byte time index and the 24-byte seal): its magic. The seal's checksum sees it
    // before the decoder does.
    bytes[48 + 40 + 24] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let (records, report) = decode_all(tmp.path()).unwrap();
    assert_eq!(records.len(), 2_200);
    let [DumpWarning::FrameRejected { byte, problem, .. }, DumpWarning::SegmentShort { index, read, .. }] =
        &report.warnings[..]
    else {
        panic!("{:?}", report.warnings)
    };
    assert_eq!(*byte, 48);
    assert!(problem.contains("checksum"), "{problem}");
    // The segment is closed: its index line says what the lost frame held.
    assert_eq!((index.records, *read), (3_300, 2_200));
}

#[test]
fn fixture_chunks_round_trip_through_compact_one_by_one() {
    use cupmon_records::dump::{ChunkCompressor, ChunkDecompressor};
    for name in crate::common::FIXTURES {
        let src = Dump::open(fixture_dir(name)).unwrap();
        let layout = src.layout().unwrap();
        let mut c = ChunkCompressor::new(layout, 1);
        let mut chunks = src.chunks().unwrap();
        while let Some(chunk) = chunks.next_chunk().unwrap() {
            let z = c.compress(chunk.data).unwrap();
            let back = ChunkDecompressor::new(layout)
                .decompress(&z, 1 << 24)
                .unwrap();
            assert!(back == chunk.data, "{name}: chunk {}", chunk.number);
        }
    }
}
