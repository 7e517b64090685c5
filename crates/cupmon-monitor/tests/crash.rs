//! What a dump holds when its process is killed (no `stop`): every annotation pushed so
//! far, a meta that says the session is still open (so the dropped-record count is
//! unknown, in the report and in every trace), and, before the first flush, an empty
//! dump that reads as such. `stop` closes the session.

use std::time::Duration;

use cupmon_records::dump::{MetaFile, META_FILE, SESSION_OPEN};
use cupmon_records::{Dump, DumpWarning};
use cupmon_test_support::exclusive;
use cupmon_trace::{decode_dump_to_window, export_window, ExportOptions, MergeWindow};

use crate::common::{config, fake, kinds};

/// `config` with the periodic flush out of the way: only the test flushes.
fn quiet_config(dir: &std::path::Path) -> cupmon_monitor::MonitorConfig {
    let mut c = config(dir);
    c.flush_period = Duration::from_secs(3600);
    c
}

#[test]
fn annotations_survive_a_kill_between_windows() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor =
        cupmon_monitor::Monitor::start_with(cupti, quiet_config(dir.path())).expect("start");
    let first = monitor.push_annotation("step 1").expect("push");
    fake.launch_kernels(3, 7, "k").expect("launch");
    monitor.pop_annotation().expect("pop");
    let second = monitor.push_annotation("step \"2\"").expect("push");
    monitor.flush(false).expect("flush");
    // No window ended, no stop: what a kill -9 now would leave.
    let dump = Dump::open(dir.path().join("dump")).expect("open");
    assert_eq!(
        dump.user_annotations()
            .unwrap()
            .get(&first)
            .map(String::as_str),
        Some("step 1")
    );
    assert_eq!(
        dump.user_annotations()
            .unwrap()
            .get(&second)
            .map(String::as_str),
        Some("step \"2\"")
    );
    assert!(dump.warnings().is_empty(), "{:?}", dump.warnings());
    monitor.pop_annotation().expect("pop");
    monitor.stop().expect("stop");
    let dump = Dump::open(dir.path().join("dump")).expect("open");
    assert_eq!(dump.user_annotations().unwrap().len(), 2);
    assert!(!dir.path().join("dump/user_annotations.json").exists());
}

#[test]
fn a_killed_session_says_dropped_records_are_unknown_and_stop_makes_them_known() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let dump_dir = dir.path().join("dump");
    let monitor =
        cupmon_monitor::Monitor::start_with(cupti, quiet_config(dir.path())).expect("start");
    let meta = MetaFile::read(dump_dir.join(META_FILE)).expect("meta");
    assert!(meta.session_open());
    assert_eq!(meta.dropped_records(), Some(0), "a count so far");
    fake.launch_kernels(20, 7, "k").expect("launch");
    monitor.flush(false).expect("flush");
    // A window's end updates the meta: still open.
    monitor.start_window().expect("window");
    monitor.end_window().expect("window end");
    assert!(MetaFile::read(dump_dir.join(META_FILE))
        .expect("meta")
        .session_open());
    // The dump as a kill now would leave it.
    let (window, report) = decode_dump_to_window(&dump_dir, |_| {}).expect("decode");
    assert_eq!(kinds(&window.events, "kernel"), 20);
    assert_eq!(report.dropped_records, None);
    assert_eq!(report.dropped_records_note.as_deref(), Some(SESSION_OPEN));
    assert!(
        matches!(
            report.warnings[..],
            [DumpWarning::SessionOpen {
                dropped_before: Some(0),
                ..
            }]
        ),
        "{:?}",
        report.warnings
    );
    let json = serde_json::to_vec(&window).expect("json");
    let value: serde_json::Value = serde_json::from_slice(&json).expect("json");
    assert_eq!(value["cupmon"]["dropped_records"], serde_json::Value::Null);
    assert_eq!(value["cupmon"]["dropped_records_note"], SESSION_OPEN);
    // So does the trace exported from the window JSON.
    let merge = MergeWindow::from_json(&json, "window.json").expect("window");
    let out = dir.path().join("killed.trace.json");
    export_window(&merge, &out, &ExportOptions::default()).expect("export");
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("read")).expect("json");
    assert_eq!(trace["cupmon"]["dropped_records"], serde_json::Value::Null);
    assert_eq!(trace["cupmon"]["dropped_records_note"], SESSION_OPEN);
    monitor.stop().expect("stop");
    let meta = MetaFile::read(dump_dir.join(META_FILE)).expect("meta");
    assert!(!meta.session_open());
    let (window, report) = decode_dump_to_window(&dump_dir, |_| {}).expect("decode");
    assert_eq!(report.dropped_records, Some(0));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let json = serde_json::to_value(&window).expect("json");
    assert_eq!(json["cupmon"]["dropped_records"], 0);
    assert!(json["cupmon"].get("dropped_records_note").is_none());
}

#[test]
fn a_dump_killed_before_its_first_flush_is_empty_with_a_note() {
    let _guard = exclusive();
    let (cupti, _fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let dump_dir = dir.path().join("dump");
    let monitor =
        cupmon_monitor::Monitor::start_with(cupti, quiet_config(dir.path())).expect("start");
    let (window, report) = decode_dump_to_window(&dump_dir, |_| {}).expect("decode");
    assert!(window.events.is_empty());
    assert_eq!((report.chunks, report.dropped_records), (0, None));
    assert!(
        matches!(
            report.warnings[..],
            [
                DumpWarning::SessionOpen { .. },
                DumpWarning::NothingWritten { absent: false, .. }
            ]
        ),
        "{:?}",
        report.warnings
    );
    monitor.stop().expect("stop");
}
