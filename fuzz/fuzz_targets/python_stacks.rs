//! A dump directory's Python stacks from arbitrary bytes: `python_stacks.jsonl`, the
//! whole-dump `launch_stacks.bin` and two per-segment `segments/seg-NNNNNN.stacks`,
//! read by `StackTable::read` as `stats --by-line` and the trace's stack args read
//! them. Never a panic, never an error (bad lines and foreign files are warnings); a
//! launch gets the stack its pairs give, or none when two pairs disagree.
#![no_main]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use cupmon_records::dump::{
    launch_stacks_file_name, launch_stacks_header, LaunchStack, StackTable, LAUNCH_STACKS_FILE,
    NO_PYTHON_STACK, PYTHON_STACKS_FILE, SEGMENTS_DIR,
};
use libfuzzer_sys::fuzz_target;

/// The files' contents are the input cut at this separator, in this order (the pair
/// files in the order the reader takes them).
const SEPARATOR: &[u8] = b"\n=====\n";

fn files() -> [String; 4] {
    [
        PYTHON_STACKS_FILE.to_owned(),
        LAUNCH_STACKS_FILE.to_owned(),
        format!("{SEGMENTS_DIR}/{}", launch_stacks_file_name(1)),
        format!("{SEGMENTS_DIR}/{}", launch_stacks_file_name(2)),
    ]
}

/// One scratch dump directory per fuzzing process, its files rewritten each run.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cupmon-fuzz-stacks-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(SEGMENTS_DIR)).unwrap();
        dir
    })
}

fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() + 1 < n {
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
    let files = files();
    let parts = parts(data, files.len());
    for (i, file) in files.iter().enumerate() {
        let path = dir.join(file);
        match parts.get(i) {
            Some(bytes) => std::fs::write(&path, bytes).unwrap(),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    // What the pair files say, by their format: a launch's stacks, in reading order.
    let header = launch_stacks_header();
    let mut given: HashMap<u32, Vec<u32>> = HashMap::new();
    for bytes in parts.iter().skip(1) {
        let Some(body) = bytes.strip_prefix(header.as_slice()) else {
            continue;
        };
        for e in body.chunks_exact(8) {
            let corr = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
            let stack = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
            given.entry(corr).or_default().push(stack);
        }
    }

    let table = StackTable::read(dir);
    for w in table.warnings() {
        let _ = w.to_string();
    }
    let mut ambiguous = 0;
    for (&corr, stacks) in &given {
        let expected = if stacks.iter().all(|&s| s == stacks[0]) {
            Some(match stacks[0] {
                NO_PYTHON_STACK => LaunchStack::NoPython,
                id => LaunchStack::Stack(id),
            })
        } else {
            ambiguous += 1;
            None
        };
        assert_eq!(table.launch(corr), expected, "correlation id {corr}");
        assert_eq!(table.gpu_op(corr, 0), expected);
        let _ = table.launch_text(corr, 0);
        let _ = table.launch_text(corr, u64::from(corr));
    }
    assert_eq!(table.ambiguous(), ambiguous);
    let ids: Vec<u32> = table.stack_ids().collect();
    for id in ids.into_iter().chain([0, 1, u32::MAX]) {
        if let Some((frames, _)) = table.frames(id) {
            let user = table.user_frame(id);
            assert_eq!(user.is_some(), !frames.is_empty(), "stack {id}");
        }
    }
    let _ = table.is_empty();
});
