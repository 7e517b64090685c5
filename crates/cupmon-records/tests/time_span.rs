//! `Dump::time_span`: the first start and last end of a dump's records, from the
//! segment index and the frames' time indexes, equal to what a full decode finds, on
//! closed and unclosed segments, frames without an index, a cut last frame, another
//! client's clock, and PyTorch's single raw file.

use std::path::Path;
use std::time::Duration;

use cupmon_records::dump::{
    list_segments, BufferCompletion, FrameIndex, SegmentPolicy, TimeSpan, SEGMENTS_DIR,
};
use cupmon_records::{
    ActivityKind, Dump, DumpWriter, KernelRecord, Layout, MetaFile, Record, RecordIter,
    RecordWriter,
};

use crate::common::decode_all;

const T0: u64 = 1_796_135_520_000_000_000;

pub fn meta() -> MetaFile {
    let mut m = MetaFile::new();
    m.set("cupti_version", 130_000)
        .set("buffer_size", 1 << 20)
        .set("session_open", false)
        .set("dropped_records", 0)
        .set("chunks_written", 0);
    m
}

pub fn policy(segment_size: u64) -> SegmentPolicy {
    SegmentPolicy {
        segment_size,
        segment_period: Duration::from_secs(3600),
        keep: 1 << 40,
        keep_for: None,
    }
}

pub fn kernel(start: u64, end: u64, device: u32, correlation: u32) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end,
        completed: end,
        device_id: device,
        stream_id: 7,
        correlation_id: correlation,
        grid_x: 1,
        block_x: 32,
        name_ptr: 0x1000,
        ..KernelRecord::default()
    })
}

pub fn encode(records: &[Record]) -> Vec<u8> {
    let mut w = RecordWriter::new(Layout::cupti_13_0());
    for r in records {
        w.push(r);
    }
    w.into_bytes()
}

pub fn index_of(data: &[u8]) -> FrameIndex {
    let mut index = FrameIndex::default();
    for r in RecordIter::new(data, Layout::cupti_13_0()) {
        index.add(&r.unwrap());
    }
    index
}

pub fn completion(unix: u64, cupti: u64) -> BufferCompletion {
    BufferCompletion {
        stream_id: 0,
        context: 0,
        cupti_completed_ns: cupti,
        unix_completed_ns: unix,
    }
}

/// Buffers of kernels 1 ms apart (0.4 ms long), the i-th buffer `per` of them, with
/// ends scrambled so that the last record of a buffer is not its last end.
fn buffers(n: u64, per: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|b| {
            let records: Vec<Record> = (b * per..(b + 1) * per)
                .map(|i| {
                    let start = T0 + i * 1_000_000;
                    kernel(
                        start,
                        start + 400_000 + (i * 7919 % 13) * 40_000,
                        0,
                        i as u32,
                    )
                })
                .collect();
            encode(&records)
        })
        .collect()
}

/// A segmented dump of `bufs`; the writer is returned unfinished.
pub fn write_segmented(dir: &Path, bufs: &[Vec<u8>], segment_size: u64) -> DumpWriter {
    let mut w = DumpWriter::create_segmented(dir, &meta(), policy(segment_size)).unwrap();
    for b in bufs {
        let index = index_of(b);
        let done = index.native.last;
        w.write_buffer(
            completion(done, done),
            b,
            Some(Layout::cupti_13_0()),
            &index,
            false,
        )
        .unwrap();
    }
    w
}

/// The span as a full decode sees it (the time index's rule: a zero start is no time,
/// a zero end is the start).
fn decoded_span(dir: &Path) -> TimeSpan {
    let (records, _) = decode_all(dir).unwrap();
    let mut index = FrameIndex::default();
    for r in &records {
        index.add(r);
    }
    index.native
}

fn span(dir: &Path) -> TimeSpan {
    Dump::open(dir).unwrap().time_span().unwrap()
}

#[test]
fn closed_segments_give_the_span_a_decode_finds() {
    let tmp = tempfile::tempdir().unwrap();
    write_segmented(tmp.path(), &buffers(60, 500), 4 << 10)
        .finish()
        .unwrap();
    let list = list_segments(tmp.path()).unwrap().unwrap();
    let sizes: Vec<u64> = list
        .live
        .iter()
        .map(|f| std::fs::metadata(&f.path).unwrap().len())
        .collect();
    assert!(
        list.live.len() > 2 && list.live.iter().all(|f| f.summary.is_some()),
        "{sizes:?}"
    );
    let want = decoded_span(tmp.path());
    assert_eq!(span(tmp.path()), want);
    assert_eq!(want.first, T0);
}

#[test]
fn an_unclosed_segment_is_read_from_its_frame_indexes_even_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = write_segmented(tmp.path(), &buffers(41, 500), 4 << 10);
    w.flush().unwrap();
    std::mem::forget(w);
    let list = list_segments(tmp.path()).unwrap().unwrap();
    let active = list.live.last().unwrap();
    assert!(
        active.summary.is_none(),
        "the last segment was never closed"
    );
    assert!(list.live.len() > 1, "closed segments before it: {list:?}");
    assert_eq!(span(tmp.path()), decoded_span(tmp.path()));
    // A killed writer's cut last frame: the span is what the decode still reads.
    let len = std::fs::metadata(&active.path).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&active.path)
        .unwrap();
    f.set_len(len - 50).unwrap();
    let cut = decoded_span(tmp.path());
    assert!(
        cut.last
            < buffers(41, 500)
                .last()
                .map(|b| index_of(b).native.last)
                .unwrap()
    );
    assert_eq!(span(tmp.path()), cut);
}

#[test]
fn the_span_comes_from_the_index_not_from_decompressing_the_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let bufs = buffers(3, 500);
    let mut w = write_segmented(tmp.path(), &bufs, 64 << 20);
    w.flush().unwrap();
    std::mem::forget(w);
    let path = list_segments(tmp.path()).unwrap().unwrap().live[0]
        .path
        .clone();
    // Damage the compact header of the last frame, past its time index: a decode drops
    // that frame, the index still covers it.
    let mut bytes = std::fs::read(&path).unwrap();
    let mut at = 0;
    let mut frames = Vec::new();
    while at + 48 <= bytes.len() {
        frames.push(at);
        let size = u32::from_le_bytes(bytes[at + 20..at + 24].try_into().unwrap()) as usize;
        at += 48 + size;
    }
    let last = *frames.last().unwrap();
    bytes[last + 48 + 40] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let decoded = decoded_span(tmp.path());
    let from_index = span(tmp.path());
    assert_eq!(from_index.last, index_of(&bufs[2]).native.last);
    assert!(
        decoded.last < from_index.last,
        "the decode skipped the damaged frame"
    );
}

#[test]
fn frames_written_without_an_index_are_indexed_from_their_records() {
    let tmp = tempfile::tempdir().unwrap();
    let bufs = buffers(4, 200);
    let mut w = DumpWriter::create_segmented(tmp.path(), &meta(), policy(64 << 20)).unwrap();
    for (i, b) in bufs.iter().enumerate() {
        // write_chunk: a stored frame with an empty index.
        w.write_chunk(completion(T0 + i as u64, T0 + i as u64), b)
            .unwrap();
    }
    w.flush().unwrap();
    std::mem::forget(w);
    let want = decoded_span(tmp.path());
    assert_eq!(want.first, T0);
    assert_eq!(span(tmp.path()), want);
}

#[test]
fn records_on_another_clock_are_converted_as_the_decode_converts_them() {
    // A client's clock: 2 ticks per ns from tick 1e12 at T0.
    let tick = |unix: u64| 1_000_000_000_000 + 2 * (unix - T0);
    let tmp = tempfile::tempdir().unwrap();
    let mut w = DumpWriter::create_segmented(tmp.path(), &meta(), policy(64 << 20)).unwrap();
    for b in 0..4u64 {
        let records: Vec<Record> = (0..100)
            .map(|i| {
                let start = T0 + 5_000_000_000 + (b * 100 + i) * 1_000_000;
                kernel(tick(start), tick(start + 300_000), 0, i as u32)
            })
            .collect();
        let data = encode(&records);
        let done = T0 + 5_000_000_000 + (b + 1) * 100_000_000;
        w.write_buffer(
            completion(done, tick(done)),
            &data,
            Some(Layout::cupti_13_0()),
            &index_of(&data),
            false,
        )
        .unwrap();
    }
    w.finish().unwrap();
    let got = span(tmp.path());
    let want = decoded_span(tmp.path());
    assert_eq!(got, want);
    assert!(got.first.abs_diff(T0 + 5_000_000_000) < 1_000, "{got:?}");
}

#[test]
fn a_single_file_dump_is_walked_and_an_empty_one_has_no_span() {
    let tmp = tempfile::tempdir().unwrap();
    let mut w = DumpWriter::create(tmp.path(), &meta()).unwrap();
    for (i, b) in buffers(3, 100).iter().enumerate() {
        w.write_chunk(completion(T0 + i as u64, T0 + i as u64), b)
            .unwrap();
    }
    w.finish().unwrap();
    assert!(!tmp.path().join(SEGMENTS_DIR).exists());
    assert_eq!(span(tmp.path()), decoded_span(tmp.path()));
    assert_eq!(span(tmp.path()).first, T0);

    let empty = tempfile::tempdir().unwrap();
    DumpWriter::create_segmented(empty.path(), &meta(), policy(1 << 20))
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(span(empty.path()).get(), None);
}
