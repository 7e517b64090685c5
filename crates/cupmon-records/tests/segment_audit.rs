//! A dump's identity and checksums, and the look readers take at its segments before
//! reading them (issue 28): what the writer now puts on disk, older dumps read as
//! before, and each kind of damage a warning with the rest of the dump read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cupmon_records::digest::{digest_file_name, stored_digest, summarize};
use cupmon_records::dump::{
    list_segments, segment_file_name, DumpWarning, IndexLine, SegmentLoss, SegmentPolicy,
    CHUNK_VERSION_SEALED, META_FILE, SEGMENTS_DIR, SEGMENT_INDEX_FILE,
};
use cupmon_records::{
    walk_records, ActivityKind, DecodeReport, Dump, DumpWriter, KernelRecord, Layout, MetaFile,
    Record, RecordWriter, TimeRange,
};

use crate::common::fixture_dir;

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

/// Kernels in the dump [`write_dump`] writes.
const TOTAL: u64 = 12 * PER_BUFFER;
const PER_BUFFER: u64 = 500;

/// 12 buffers of 500 kernels (times jittered: they do not compress to nothing) in
/// segments of 4 KiB (a few buffers each), every record digested as the monitor does.
fn write_dump(dir: &Path) {
    let layout = Layout::cupti_13_0();
    let policy = SegmentPolicy {
        segment_size: 4 << 10,
        segment_period: Duration::from_secs(3600),
        keep: 1 << 40,
        keep_for: None,
    };
    let mut w = DumpWriter::create_segmented(dir, &meta(), policy).unwrap();
    for b in 0..12u64 {
        let mut rw = RecordWriter::new(layout);
        for i in b * PER_BUFFER..(b + 1) * PER_BUFFER {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
            let start = T0 + i * 10_000 + x % 3_000;
            rw.push(&Record::Kernel(KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                start,
                end: start + 1_000 + (x >> 40) % 5_000,
                correlation_id: i as u32 + 1,
                stream_id: 7,
                name_ptr: 0x1000 + (i % 5) * 0x40,
                ..KernelRecord::default()
            }));
        }
        let data = rw.into_bytes();
        w.write_records(&data, layout, |_| T0 + (b + 1) * 2_000_000)
            .unwrap();
    }
    w.finish().unwrap();
}

fn seg(dir: &Path, n: u32) -> PathBuf {
    dir.join(SEGMENTS_DIR).join(segment_file_name(n))
}

fn walk(dir: &Path) -> (u64, DecodeReport) {
    let dump = Dump::open(dir).unwrap();
    let mut n = 0;
    let report = walk_records(&dump, |_| {}, |_, _, _| n += 1).unwrap();
    (n, report)
}

fn index_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_dump_written_now_carries_its_id_in_its_meta_frames_digests_and_index() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(tmp.path());
    let dump = Dump::open(tmp.path()).unwrap();
    let id = dump.meta().dump_id().expect("the meta names the dump's id");
    let list = dump.segments().unwrap();
    assert!(list.live.len() >= 3, "{} segments", list.live.len());
    assert_eq!(list.dump_id, Some(id));
    assert!(dump.warnings().is_empty(), "{:?}", dump.warnings());
    for file in &list.live {
        let bytes = std::fs::read(&file.path).unwrap();
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        assert_eq!(version, CHUNK_VERSION_SEALED);
        let digest = stored_digest(&tmp.path().join(SEGMENTS_DIR), file, Some(id))
            .unwrap()
            .expect("a sound digest");
        assert_eq!(digest.dump_id, Some(id.to_string()));
        assert_eq!(digest.segment, Some(file.segment));
        let s = file.summary.as_ref().unwrap();
        assert!(file.sound && s.digest_xxh3.is_some() && s.last_frame_at.is_some());
    }
    for line in index_lines(tmp.path()) {
        assert!(line.contains(",\"xxh3\":\""), "{line}");
    }
    let (n, report) = walk(tmp.path());
    assert_eq!(n, TOTAL);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn an_older_dump_without_ids_or_checksums_reads_as_before() {
    // The H200 fixture was written before the seal: version-3 frames, no dump id, no
    // checksums in its index.
    let dir = fixture_dir("torch_transformer").join("dump");
    let dump = Dump::open(&dir).unwrap();
    assert_eq!(dump.meta().dump_id(), None);
    let list = dump.segments().unwrap();
    assert_eq!(list.dump_id, None);
    assert!(list.live.iter().all(|f| f.sound), "{:?}", list.live);
    let (n, report) = walk(&dir);
    assert_eq!(n, 1709, "what its index line says");
    assert!(
        !report.warnings.iter().any(|w| matches!(
            w,
            DumpWarning::SegmentLost { .. } | DumpWarning::SegmentShort { .. }
        )),
        "{:?}",
        report.warnings
    );
}

#[test]
fn an_older_dump_s_segment_copied_under_another_number_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture_dir("torch_transformer").join("dump");
    std::fs::create_dir_all(tmp.path().join(SEGMENTS_DIR)).unwrap();
    for name in [META_FILE, "kernel_names.tsv", "user_annotations.jsonl"] {
        std::fs::copy(src.join(name), tmp.path().join(name)).unwrap();
    }
    for name in [SEGMENT_INDEX_FILE, &segment_file_name(1)] {
        let (from, to) = (
            src.join(SEGMENTS_DIR).join(name),
            tmp.path().join(SEGMENTS_DIR).join(name),
        );
        std::fs::copy(from, to).unwrap();
    }
    std::fs::copy(seg(tmp.path(), 1), seg(tmp.path(), 7)).unwrap();
    let (n, report) = walk(tmp.path());
    assert_eq!(n, 1709, "counted once");
    let lost: Vec<_> = report
        .warnings
        .iter()
        .filter_map(|w| match w {
            DumpWarning::SegmentLost { file, why, .. } => Some((file.clone(), why.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        lost,
        [(
            "segments/seg-000007.cupmr".to_owned(),
            SegmentLoss::Copy { of: 1 }
        )]
    );
}

#[test]
fn an_all_zero_segment_is_a_warning_and_the_segments_after_it_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(tmp.path());
    let path = seg(tmp.path(), 1);
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::write(&path, vec![0u8; len as usize]).unwrap();
    let list = list_segments(tmp.path()).unwrap().unwrap();
    let lost = list.live[0].summary.as_ref().unwrap().records;
    assert!(!list.live[0].sound, "its digest must not stand for it");
    let (n, report) = walk(tmp.path());
    assert_eq!(n, TOTAL - lost);
    assert!(
        report.warnings.iter().any(|w| matches!(
            w,
            DumpWarning::SegmentShort { index, read: 0, .. } if index.records == lost
        )),
        "{:?}",
        report.warnings
    );
    // stats reads it as decode does: the same count, not the digest's.
    let dump = Dump::open(tmp.path()).unwrap();
    let summary = summarize(&dump, &TimeRange::default(), |_| {}).unwrap();
    assert_eq!(summary.report.records, n);
}

#[test]
fn a_digest_that_contradicts_its_index_line_is_not_used_in_an_older_dump_too() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(tmp.path());
    let segments = tmp.path().join(SEGMENTS_DIR);
    // The index as a cupmon before the seal wrote it (no digest checksum), and segment
    // 1's digest claiming 999,999 launches of its first kernel.
    let lines: Vec<String> = index_lines(tmp.path())
        .iter()
        .map(|l| {
            let mut line: IndexLine = serde_json::from_str(l).unwrap();
            if let IndexLine::Closed(s) = &mut line {
                s.digest_xxh3 = None;
            }
            serde_json::to_string(&line).unwrap() + "\n"
        })
        .collect();
    std::fs::write(segments.join(SEGMENT_INDEX_FILE), lines.concat()).unwrap();
    let path = segments.join(digest_file_name(1));
    let mut d: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    d["kernels"][0]["launches"] = 999_999.into();
    std::fs::write(&path, d.to_string()).unwrap();
    let dump = Dump::open(tmp.path()).unwrap();
    let list = dump.segments().unwrap();
    let problem = stored_digest(&segments, &list.live[0], list.dump_id).unwrap_err();
    assert!(problem.contains("kernel launches"), "{problem}");
    let summary = summarize(&dump, &TimeRange::default(), |_| {}).unwrap();
    assert_eq!(summary.report.records, TOTAL);
    let launches: u64 = summary.digest.kernels.iter().map(|k| k.launches).sum();
    assert_eq!(launches, TOTAL, "the records' count, not the digest's");
    assert!(summary
        .report
        .warnings
        .iter()
        .any(|w| matches!(w, DumpWarning::DigestNotUsed { file, .. } if file.ends_with("seg-000001.digest"))));
}

#[test]
fn a_meta_that_lost_its_id_takes_the_one_its_segments_share() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(tmp.path());
    let mut meta = MetaFile::read(tmp.path().join(META_FILE)).unwrap();
    let id = meta.dump_id().unwrap();
    meta.json_mut().remove("dump_id");
    meta.write(tmp.path().join(META_FILE)).unwrap();
    let dump = Dump::open(tmp.path()).unwrap();
    assert_eq!(dump.segments().unwrap().dump_id, Some(id));
    let (n, report) = walk(tmp.path());
    assert_eq!(n, TOTAL);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn a_cut_or_zeroed_index_line_is_skipped_and_the_lines_after_it_read() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(tmp.path());
    let mut lines = index_lines(tmp.path());
    lines[0] = "\0".repeat(40);
    let half = lines[1].len() / 2;
    lines[1].truncate(half);
    let path = tmp.path().join(SEGMENTS_DIR).join(SEGMENT_INDEX_FILE);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let dump = Dump::open(tmp.path()).unwrap();
    let bad: Vec<usize> = dump
        .warnings()
        .iter()
        .filter_map(|w| match w {
            DumpWarning::BadIndexLine { line, .. } => Some(*line),
            _ => None,
        })
        .collect();
    assert_eq!(bad, [1, 2]);
    let list = dump.segments().unwrap();
    assert!(list.live[0].summary.is_none() && list.live[2].summary.is_some());
    let (n, _) = walk(tmp.path());
    assert_eq!(n, TOTAL, "the two segments are read from their records");
}

#[test]
fn buffer_numbers_stay_their_place_when_a_segment_between_is_lost() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(tmp.path());
    let numbers = |dir: &Path| {
        let dump = Dump::open(dir).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        walk_records(
            &dump,
            |_| {},
            |n, _, _| {
                seen.insert(n);
            },
        )
        .unwrap();
        seen
    };
    let before = numbers(tmp.path());
    let list = list_segments(tmp.path()).unwrap().unwrap();
    assert!(list.live.len() >= 3);
    let lost = list.live[1].summary.as_ref().unwrap().chunks;
    std::fs::remove_file(seg(tmp.path(), 2)).unwrap();
    let after = numbers(tmp.path());
    assert_eq!(after.len() as u64, before.len() as u64 - lost);
    assert!(after.is_subset(&before), "{after:?} within {before:?}");
    assert_eq!(
        after.last(),
        before.last(),
        "the last buffer keeps its number"
    );
}
