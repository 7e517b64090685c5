//! The meta file and the side files (kernel names, user annotations) from arbitrary bytes.
#![no_main]

use cupmon_records::dump::parse_user_annotations;
use cupmon_records::{KernelNameTable, MetaFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(meta) = MetaFile::from_bytes(data, "meta") {
        let again = MetaFile::from_bytes(&meta.to_bytes(), "meta").unwrap();
        assert_eq!(again, meta);
        let _ = (meta.cupti_version(), meta.activities(), meta.buffer_size());
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(names) = KernelNameTable::parse(&text, "names") {
        let mut out = Vec::new();
        names.write_to(&mut out).unwrap();
    }
    let _ = parse_user_annotations(data, "annotations");
});
