//! Flight-recorder dumps (segments): a re-run after the oldest segments were retired
//! adds exactly the new chunks. The walk numbers buffers from the first live segment,
//! so without the retired segments' counts a re-run skipped as many new chunks as
//! had been retired.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use cupmon_records::dump::{
    list_segments, segment_file_name, BufferCompletion, FrameIndex, IndexLine, RetireReason,
    KERNEL_NAMES_FILE, META_FILE, SEGMENTS_DIR, SEGMENT_INDEX_FILE,
};
use cupmon_records::{ActivityKind, KernelRecord, Layout, Record, RecordIter, RecordWriter};

use crate::common::*;

const T0: u64 = 1_796_000_000_000_000_000;
const BUFFERS: u64 = 12;
const PER_BUFFER: u64 = 200;

/// A segmented dump of `BUFFERS` buffers of kernels with distinct correlation ids
/// (1, 2, ...), one buffer per segment (frames stored, not compressed, as when the
/// writer is behind: each is larger than a segment's 4 KiB), nothing retired.
fn write_full(dir: &Path) {
    let layout = Layout::cupti_13_0();
    let mut w = segmented_writer(dir, 4 << 10);
    for k in 0..4u64 {
        w.add_kernel_name(0x1000 + k * 0x40, &format!("kernel_{k}"))
            .unwrap();
    }
    for b in 0..BUFFERS {
        let mut rw = RecordWriter::new(layout);
        for i in b * PER_BUFFER..(b + 1) * PER_BUFFER {
            let d = 2_000 + i % 700;
            rw.push(&Record::Kernel(KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                start: T0 + i * 10_000,
                end: T0 + i * 10_000 + d,
                completed: T0 + i * 10_000 + d,
                correlation_id: i as u32 + 1,
                stream_id: 7,
                grid_x: 64,
                block_x: 128,
                name_ptr: 0x1000 + (i % 4) * 0x40,
                ..KernelRecord::default()
            }));
        }
        let data = rw.as_bytes().to_vec();
        let mut index = FrameIndex::default();
        for r in RecordIter::new(&data, layout) {
            index.add(&r.unwrap());
        }
        let at = T0 + (b + 1) * PER_BUFFER * 10_000;
        let completion = BufferCompletion {
            stream_id: 0,
            context: 0,
            cupti_completed_ns: at,
            unix_completed_ns: at,
        };
        w.write_buffer(completion, &data, Some(layout), &index, true)
            .unwrap();
    }
    w.finish().unwrap();
}

/// The closed lines of the full dump's index, by segment.
fn closed_lines(full: &Path) -> BTreeMap<u32, String> {
    let text = std::fs::read_to_string(full.join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE)).unwrap();
    text.lines()
        .filter_map(|l| match serde_json::from_str::<IndexLine>(l).unwrap() {
            IndexLine::Closed(s) => Some((s.segment, l.to_owned())),
            IndexLine::Retired { .. } => None,
        })
        .collect()
}

/// Give `dump` the full dump's segments `segments` as the recorder would have
/// written them (files, then their `closed` lines).
fn add_segments(full: &Path, dump: &Path, segments: impl IntoIterator<Item = u32>) {
    let lines = closed_lines(full);
    let dir = dump.join(SEGMENTS_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    for f in [META_FILE, KERNEL_NAMES_FILE] {
        std::fs::copy(full.join(f), dump.join(f)).unwrap();
    }
    let mut index = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(SEGMENT_INDEX_FILE))
        .unwrap();
    for s in segments {
        let name = segment_file_name(s);
        std::fs::copy(full.join(SEGMENTS_DIR).join(&name), dir.join(&name)).unwrap();
        writeln!(index, "{}", lines[&s]).unwrap();
    }
}

/// Retire segments `segments` of `dump` as the recorder does: the line, then the file.
fn retire(dump: &Path, segments: impl IntoIterator<Item = u32>) {
    let dir = dump.join(SEGMENTS_DIR);
    let mut index = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(SEGMENT_INDEX_FILE))
        .unwrap();
    for segment in segments {
        let line = IndexLine::Retired {
            segment,
            reason: RetireReason::Keep,
            at_unix_ns: T0,
        };
        writeln!(index, "{}", serde_json::to_string(&line).unwrap()).unwrap();
        std::fs::remove_file(dir.join(segment_file_name(segment))).unwrap();
    }
}

/// Correlation ids of the kernel rows in `out`, sorted (duplicates kept).
fn kernel_ids(out: &Path) -> Vec<i64> {
    let mut ids: Vec<i64> = rows(out, "kernels")
        .iter()
        .map(|r| int(r, "correlation_id").unwrap())
        .collect();
    ids.sort();
    ids
}

/// The correlation ids of the kernels in segments `segments` of the full dump.
fn ids_in(full: &Path, segments: std::ops::RangeInclusive<u32>) -> Vec<i64> {
    let list = list_segments(full).unwrap().unwrap();
    let chunks: u64 = list
        .live
        .iter()
        .filter(|f| f.segment < *segments.start())
        .map(|f| f.summary.as_ref().unwrap().chunks)
        .sum();
    let n: u64 = list
        .live
        .iter()
        .filter(|f| segments.contains(&f.segment))
        .map(|f| f.summary.as_ref().unwrap().chunks)
        .sum();
    ((chunks * PER_BUFFER + 1) as i64..=((chunks + n) * PER_BUFFER) as i64).collect()
}

fn chunks_of(full: &Path, segments: std::ops::RangeInclusive<u32>) -> u64 {
    list_segments(full)
        .unwrap()
        .unwrap()
        .live
        .iter()
        .filter(|f| segments.contains(&f.segment))
        .map(|f| f.summary.as_ref().unwrap().chunks)
        .sum()
}

#[test]
fn a_rerun_after_segments_were_retired_adds_exactly_the_new_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    write_full(&full);
    let n = list_segments(&full).unwrap().unwrap().live.len() as u32;
    assert_eq!(u64::from(n), BUFFERS, "one segment per buffer");
    let (dump, out) = (tmp.path().join("4242"), tmp.path().join("out"));
    // First export: segments 1..=h; then the recorder writes the rest and retires
    // 1..=r, all of them exported already.
    let (h, r) = (n / 2, n / 3);
    add_segments(&full, &dump, 1..=h);
    let first = export(&dump, &options(&out)).unwrap();
    assert_eq!(kernel_ids(&out), ids_in(&full, 1..=h));
    add_segments(&full, &dump, h + 1..=n);
    retire(&dump, 1..=r);
    let second = export(&dump, &options(&out)).unwrap();
    assert_eq!(second.chunks_already_exported, chunks_of(&full, r + 1..=h));
    assert_eq!(second.chunks_retired_unread, 0);
    assert_eq!(
        rows_written(&second, "kernels"),
        ids_in(&full, h + 1..=n).len() as u64
    );
    // Every kernel once, as a whole export of the full dump has them.
    assert_eq!(kernel_ids(&out), ids_in(&full, 1..=n));
    assert_eq!(
        rows_written(&first, "kernels") + rows_written(&second, "kernels"),
        BUFFERS * PER_BUFFER
    );
    // The new files are named after the first new chunk in the dump's history.
    let seq = format!(".{:010}.parquet", chunks_of(&full, 1..=h));
    assert!(
        parquet_files(&out.join("kernels"))
            .iter()
            .any(|f| f.to_string_lossy().ends_with(&seq)),
        "no file ending {seq}"
    );
    // Nothing new after that.
    let third = export(&dump, &options(&out)).unwrap();
    assert_eq!(rows_written(&third, "kernels"), 0);
}

#[test]
fn chunks_retired_before_any_export_read_them_are_counted_as_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    write_full(&full);
    let n = list_segments(&full).unwrap().unwrap().live.len() as u32;
    assert_eq!(u64::from(n), BUFFERS, "one segment per buffer");
    let (dump, out) = (tmp.path().join("4242"), tmp.path().join("out"));
    let h = n / 2;
    add_segments(&full, &dump, 1..=h);
    export(&dump, &options(&out)).unwrap();
    // The recorder retires past what was exported: segment h + 1 is never read.
    add_segments(&full, &dump, h + 1..=n);
    retire(&dump, 1..=h + 1);
    let second = export(&dump, &options(&out)).unwrap();
    assert_eq!(
        second.chunks_retired_unread,
        chunks_of(&full, h + 1..=h + 1)
    );
    assert_eq!(second.chunks_already_exported, 0);
    let mut want = ids_in(&full, 1..=h);
    want.extend(ids_in(&full, h + 2..=n));
    assert_eq!(kernel_ids(&out), want);
}

#[test]
fn a_retired_segment_without_its_closed_line_stops_a_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    write_full(&full);
    let n = list_segments(&full).unwrap().unwrap().live.len() as u32;
    let (dump, out) = (tmp.path().join("4242"), tmp.path().join("out"));
    add_segments(&full, &dump, 1..=2);
    export(&dump, &options(&out)).unwrap();
    add_segments(&full, &dump, 3..=n);
    // Segment 1's file gone and its lines lost: how far the numbers shifted is unknown.
    let index = dump.join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE);
    let text = std::fs::read_to_string(&index).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains("\"segment\":1,"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&index, kept).unwrap();
    std::fs::remove_file(dump.join(SEGMENTS_DIR).join(segment_file_name(1))).unwrap();
    let err = export(&dump, &options(&out)).unwrap_err();
    assert!(
        matches!(
            err,
            cupmon_parquet::ExportError::UncountedSegments { segments: 1, .. }
        ),
        "{err}"
    );
    assert!(err.is_bad_input());
    assert!(err.to_string().contains("index.jsonl"), "{err}");
}

#[test]
fn a_slice_reads_only_the_segments_that_can_hold_its_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    write_full(&full);
    let out = tmp.path().join("out");
    // Kernels 1000..1400 (correlation ids 1001..=1400): buffers 5 and 6, the
    // segments 6 and 7 of the twelve; kernel i starts at T0 + i * 10 us and ends
    // before the next one starts.
    let (a, b) = (5 * PER_BUFFER, 7 * PER_BUFFER);
    let mut opts = options(&out);
    opts.from_ns = Some((T0 + a * 10_000) as i64);
    opts.to_ns = Some((T0 + b * 10_000) as i64);
    let e = export(&full, &opts).unwrap();
    assert_eq!(e.report.segments_skipped, BUFFERS - 2, "{:?}", e.report);
    assert_eq!(e.report.chunks, 2, "only the two segments were read");
    assert_eq!(e.rows_outside_slice, 0);
    let want: Vec<i64> = (a as i64 + 1..=b as i64).collect();
    assert_eq!(kernel_ids(&out), want);
    // The chunks the export took are numbered in the dump, skipped segments counted.
    let d = &rows(&out, "dumps")[0];
    assert_eq!(
        (int(d, "first_chunk"), int(d, "end_chunk")),
        (Some(5), Some(7))
    );
    // A whole export reads every segment.
    let whole = export(&full, &options(&tmp.path().join("whole"))).unwrap();
    assert_eq!(whole.report.segments_skipped, 0);
    assert_eq!(whole.report.chunks, BUFFERS);
}
