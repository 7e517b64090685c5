//! A dump directory's `hang-N.json` from arbitrary bytes, read as `cupmon hang` and
//! the diagnosis read them: never a panic; a record that reads is written again and
//! reads back the same, and one that does not is an error naming its file.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use cupmon_hang::{read_hang_record, read_hang_records, write_hang_record};
use libfuzzer_sys::fuzz_target;

/// One scratch directory per fuzzing process, its record rewritten each run.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cupmon-fuzz-hang-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("in")).unwrap();
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch().join("in");
    let path = dir.join("hang-1.json");
    std::fs::write(&path, data).unwrap();
    let (records, problems) = read_hang_records(&dir);
    assert_eq!(records.len() + problems.len(), 1);
    for p in &problems {
        assert!(p.to_string().contains("hang-1.json"), "{p}");
    }
    let Some((_, record)) = records.into_iter().next() else {
        return;
    };
    // Written as the monitor writes it, read again: the same record.
    let out = scratch().join("out");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let written = write_hang_record(&out, &record).expect("a record that read is written");
    let again = read_hang_record(&written).expect("a record written reads back");
    assert_eq!(again, record);
});
