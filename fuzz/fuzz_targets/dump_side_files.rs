//! A dump directory whose side files come from arbitrary bytes: `kernel_names.tsv`,
//! `user_annotations.jsonl` and its index `.idx`, `segments/index.jsonl` and a digest,
//! beside a real meta. Opening it, reading its annotations whole and by id (the
//! index's blocks, read lazily), and listing its segments never panic and never fail
//! for bad lines; a lookup by id finds only ids the whole log has. (An index that
//! lies about a block's ids can hide a name from a lookup: the index is a hint
//! without a checksum, and the lookup is not asserted equal to the whole read.)
#![no_main]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use cupmon_records::dump::{
    list_segments, KERNEL_NAMES_FILE, META_FILE, SEGMENTS_DIR, USER_ANNOTATIONS_INDEX_FILE,
    USER_ANNOTATIONS_LOG_FILE,
};
use cupmon_records::{Dump, MetaFile};
use libfuzzer_sys::fuzz_target;

/// The files' contents are the input cut at this separator, in this order.
const SEPARATOR: &[u8] = b"\n=====\n";
const FILES: [&str; 5] = [
    KERNEL_NAMES_FILE,
    USER_ANNOTATIONS_LOG_FILE,
    USER_ANNOTATIONS_INDEX_FILE,
    "segments/index.jsonl",
    "segments/seg-000001.digest",
];

/// One scratch dump directory per fuzzing process, its files rewritten each run.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cupmon-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(SEGMENTS_DIR)).unwrap();
        let mut meta = MetaFile::new();
        meta.set("cupti_version", 130001)
            .set("buffer_size", 4 << 20);
        meta.write(dir.join(META_FILE)).unwrap();
        dir
    })
}

fn parts(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() + 1 < FILES.len() {
        match rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(at) => {
                out.push(&rest[..at]);
                rest = &rest[at + SEPARATOR.len()..];
            }
            None => break,
        }
    }
    out.push(rest);
    out
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    let parts = parts(data);
    for (i, file) in FILES.iter().enumerate() {
        let path = dir.join(file);
        match parts.get(i) {
            Some(bytes) => std::fs::write(&path, bytes).unwrap(),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let dump = Dump::open(dir).expect("bad side files are warnings, never an error");
    for w in dump.warnings() {
        let _ = w.to_string();
    }
    let _ = dump.kernel_names().sorted();
    // Every id the log names, and some it does not, looked up through the index's
    // blocks (a fresh dump: nothing read whole yet).
    let fresh = Dump::open(dir).unwrap();
    let all = dump
        .user_annotations()
        .expect("the log was there at open")
        .clone();
    let mut ids: BTreeSet<u64> = all.keys().copied().collect();
    ids.extend([0, 1, u64::MAX]);
    let named = fresh.user_annotations_named(&ids).unwrap();
    assert!(named.keys().all(|id| all.contains_key(id)));
    for w in dump.annotation_warnings() {
        let _ = w.to_string();
    }
    let list = list_segments(dir)
        .expect("listing")
        .expect("a segments folder");
    assert!(list.live.is_empty() || list.live.iter().all(|f| f.segment >= 1));
    for w in &list.warnings {
        let _ = w.to_string();
    }
});
