//! The meta file and the side files (kernel names, user annotations, the segment
//! index's lines) from arbitrary bytes: never a panic, and what is kept survives a
//! write and a read. Bad lines anywhere are skipped and counted, never an error.
#![no_main]

use cupmon_records::dump::{parse_annotation_log, parse_user_annotations, DumpWarning};
use cupmon_records::{KernelNameTable, MetaFile};
use libfuzzer_sys::fuzz_target;

/// Bad lines are counted no more than there are lines, and the first is one of them.
fn check(warnings: &[DumpWarning], data: &[u8]) {
    let lines = data.split(|&b| b == b'\n').count();
    for w in warnings {
        if let DumpWarning::BadLines {
            lines: bad,
            first_line,
            kept,
            ..
        } = w
        {
            assert!(*bad >= 1 && bad + kept <= lines, "{w}");
            assert!(*first_line >= 1 && *first_line <= lines, "{w}");
        }
        let _ = w.to_string();
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(meta) = MetaFile::from_bytes(data, "meta") {
        let again = MetaFile::from_bytes(&meta.to_bytes(), "meta").unwrap();
        assert_eq!(again, meta);
        let _ = (meta.cupti_version(), meta.activities(), meta.buffer_size());
    }
    let text = String::from_utf8_lossy(data);
    let names = KernelNameTable::parse(&text, "names");
    check(names.warnings(), text.as_bytes());
    // What was kept is written back and read again the same (TABs and newlines in a
    // name become spaces, so compare after one round).
    let mut out = Vec::new();
    names.write_to(&mut out).unwrap();
    let again = KernelNameTable::parse(&String::from_utf8_lossy(&out), "names");
    assert_eq!(again.len(), names.len());
    assert!(again.warnings().is_empty(), "{:?}", again.warnings());

    let (log, warnings) = parse_annotation_log(data, "log");
    check(&warnings, data);
    let mut out = Vec::new();
    for (id, name) in &log {
        out.extend(cupmon_records::dump::annotation_line(*id, name));
    }
    let (again, warnings) = parse_annotation_log(&out, "log");
    assert_eq!(again, log);
    assert!(warnings.is_empty());

    let _ = parse_user_annotations(data, "annotations");
});
