//! The trace of a window is made outside the traced process, from its
//! `window-N.json` (the injection library writes only that file): it must be the
//! trace the process itself made from the typed window before, byte for byte (the
//! Perfetto format is written from that same Chrome JSON).

use cupmon_trace::{decode_dump_to_window, export_window, ExportOptions, MergeWindow, TraceFormat};

use super::common::{fixture_dir, FIXTURES};

fn trace_of(window: &MergeWindow, dir: &std::path::Path, name: &str) -> Vec<u8> {
    let path = dir.join(name);
    let options = ExportOptions {
        trace_name: Some("cupmon window 0 of pid 1".into()),
        device_properties_json: None,
        exact: false,
        format: Some(TraceFormat::Json),
    };
    export_window(window, &path, &options).expect("export");
    std::fs::read(&path).expect("read the trace")
}

#[test]
fn a_trace_made_from_the_window_file_is_the_one_made_from_the_typed_window() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in FIXTURES {
        let (window, _) = decode_dump_to_window(fixture_dir(name), |_| {}).expect("decode");
        assert!(!window.events.is_empty(), "{name}: no events");
        let typed = trace_of(&MergeWindow::from(&window), dir.path(), "typed.trace.json");
        // What the injection library writes (session.rs) and the CLI reads back.
        let file = dir.path().join("window-0.json");
        std::fs::write(&file, serde_json::to_vec(&window).expect("serialise")).expect("write");
        let read = MergeWindow::read(&file).expect("read the window file");
        let from_file = trace_of(&read, dir.path(), "file.trace.json");
        assert!(typed == from_file, "{name}: the traces differ");
    }
}
