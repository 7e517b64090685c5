//! Dumps of processes that ended without stopping cupmon (killed, crashed): the meta
//! still says `session_open`, so the dropped-record count is unknown, with the reason;
//! a dump killed before its first flush is empty, with a note, not an error.

use std::fs;

use super::common::{decode_all, fixture_dir};
use super::damage::{damaged, error_of};
use cupmon_records::dump::{META_FILE, RAW_BUFFERS_FILE, SESSION_OPEN};
use cupmon_records::{DumpWarning, MetaFile};

/// The cuda_workload dump with its meta's keys set to `keys`.
fn with_meta(keys: serde_json::Value) -> tempfile::TempDir {
    let dir = damaged(|_| {});
    let mut meta = MetaFile::read(fixture_dir("cuda_workload").join(META_FILE)).unwrap();
    for (k, v) in keys.as_object().unwrap() {
        meta.set(k, v.clone());
    }
    meta.write(dir.path().join(META_FILE)).unwrap();
    dir
}

#[test]
fn killed_session_reports_dropped_records_as_unknown_with_the_reason() {
    let dir = with_meta(serde_json::json!({
        "session_open": true, "dropped_records": 4, "chunks_written": 2
    }));
    let (records, report) = decode_all(dir.path()).unwrap();
    assert_eq!(
        (report.chunks, records.len()),
        (2, 308),
        "every chunk is read"
    );
    assert_eq!(report.dropped_records, None);
    assert_eq!(report.dropped_records_note.as_deref(), Some(SESSION_OPEN));
    assert_eq!(
        SESSION_OPEN,
        "the process ended without closing its dump (killed?): records dropped after the \
         last meta update are unknown"
    );
    assert_eq!(
        report
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [format!(
            "cupti_monitor_meta.bin: {SESSION_OPEN} (4 were dropped before it); records still \
             in CUPTI's buffers at the end were lost"
        )]
    );
}

#[test]
fn closed_session_reports_its_dropped_records() {
    let dir = with_meta(serde_json::json!({"session_open": false, "dropped_records": 4}));
    let (_, report) = decode_all(dir.path()).unwrap();
    assert_eq!(report.dropped_records, Some(4));
    assert_eq!(report.dropped_records_note, None);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn a_meta_without_the_count_says_why_dropped_records_are_unknown() {
    let (_, report) = decode_all(fixture_dir("cuda_workload")).unwrap();
    assert_eq!(report.dropped_records, None);
    assert_eq!(
        report.dropped_records_note.as_deref(),
        Some("the meta has no dropped_records key (PyTorch's CUPTI monitor does not write one)")
    );
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

#[test]
fn dump_killed_before_its_first_flush_is_empty_with_a_note() {
    for chunks_written in [Some(0), None] {
        for absent in [false, true] {
            let mut keys = serde_json::json!({"session_open": true, "dropped_records": 0});
            if let Some(n) = chunks_written {
                keys["chunks_written"] = n.into();
            }
            let dir = with_meta(keys);
            let raw = dir.path().join(RAW_BUFFERS_FILE);
            if absent {
                fs::remove_file(&raw).unwrap();
            } else {
                fs::write(&raw, b"").unwrap();
            }
            let (records, report) = decode_all(dir.path()).unwrap();
            assert_eq!((records.len(), report.chunks), (0, 0));
            assert_eq!(report.dropped_records, None);
            let [DumpWarning::SessionOpen { .. }, w @ DumpWarning::NothingWritten { .. }] =
                &report.warnings[..]
            else {
                panic!("{:?}", report.warnings)
            };
            let state = if absent { "absent" } else { "empty" };
            assert_eq!(
                w.to_string(),
                format!(
                    "cupti_monitor_raw_buffers.bin is {state}: the process ended before cupmon \
                     wrote its first activity buffer (killed before the first flush?); the dump \
                     holds no records"
                )
            );
        }
    }
}

#[test]
fn empty_raw_file_of_a_dump_whose_meta_says_it_wrote_chunks_stays_an_error() {
    for open in [true, false] {
        let dir = with_meta(serde_json::json!({"session_open": open, "chunks_written": 3}));
        fs::write(dir.path().join(RAW_BUFFERS_FILE), b"").unwrap();
        assert_eq!(
            error_of(dir.path()),
            "cupti_monitor_raw_buffers.bin: empty file (0 bytes)"
        );
    }
}

/// Regression: a full disk during `cupmon run` left an empty
/// `cupti_monitor_meta.bin.tmp`, and the dump then said the process was killed.
#[test]
fn a_meta_rewrite_on_a_full_disk_keeps_the_last_meta_and_says_the_disk_was_full() {
    use cupmon_records::dump::{DISK_FULL_SUFFIX, META_TMP_SUFFIX};
    let dir = with_meta(serde_json::json!({
        "session_open": true, "dropped_records": 4, "chunks_written": 2
    }));
    let meta_path = dir.path().join(META_FILE);
    let before = fs::read(&meta_path).unwrap();
    // /dev/full answers every write with ENOSPC, as a full disk does.
    let tmp = dir.path().join(format!("{META_FILE}{META_TMP_SUFFIX}"));
    std::os::unix::fs::symlink("/dev/full", &tmp).unwrap();
    let mut last = MetaFile::from_bytes(&before, META_FILE).unwrap();
    last.set("session_open", false);
    let err = last.write(&meta_path).unwrap_err().to_string();
    assert!(err.starts_with("cupti_monitor_meta.bin: "), "{err}");
    assert_eq!(
        fs::read(&meta_path).unwrap(),
        before,
        "the last good meta is kept"
    );
    let marker = dir.path().join(format!("{META_FILE}{DISK_FULL_SUFFIX}"));
    assert!(fs::symlink_metadata(&marker).is_ok() && fs::symlink_metadata(&tmp).is_err());

    let (records, report) = decode_all(dir.path()).unwrap();
    assert_eq!(records.len(), 308);
    let warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "cupti_monitor_meta.bin: the process's last update of the meta was not written (the \
          disk was full: cupti_monitor_meta.bin.disk-full marks the rewrite that failed); read \
          the one before it, so the session reads as still open and its counts stop at that \
          update"
        ]
    );
    assert_eq!(
        report.dropped_records_note.as_deref(),
        Some(cupmon_records::META_NOT_UPDATED)
    );

    // The next rewrite that succeeds removes the mark.
    last.write(&meta_path).unwrap();
    assert!(fs::symlink_metadata(&marker).is_err());
    assert!(decode_all(dir.path()).unwrap().1.warnings.is_empty());
}

/// What an older cupmon left on a full disk (an empty temporary file) is said too.
#[test]
fn an_empty_meta_tmp_beside_an_open_session_is_said() {
    let dir = with_meta(serde_json::json!({"session_open": true, "chunks_written": 2}));
    fs::write(dir.path().join(format!("{META_FILE}.tmp")), b"").unwrap();
    let (_, report) = decode_all(dir.path()).unwrap();
    let [w] = &report.warnings[..] else {
        panic!("{:?}", report.warnings)
    };
    assert!(
        w.to_string().contains(
            "cupti_monitor_meta.bin.tmp is empty: the disk was full, or the process was killed \
             while writing it"
        ),
        "{w}"
    );
}
