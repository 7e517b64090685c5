//! Damaged dumps: a truncated last chunk is a warning (all complete chunks decoded); a bad
//! magic, a corrupt size, a corrupt meta, an empty or random file are errors naming the
//! file, chunk and byte; garbage records end their chunk with a counted warning. Nothing
//! panics.

use std::fs;
use std::path::Path;

use super::common::{decode_all, fixture_dir};
use cupmon_records::dump::{META_FILE, RAW_BUFFERS_FILE};
use cupmon_records::{DumpError, DumpWarning};

const SECOND_CHUNK: u64 = 15464; // cuda_workload: chunk 0 is 48 + 15416 bytes
const RAW_LEN: usize = 15680;

/// A copy of the cuda_workload dump whose raw-buffer file is `edit`ed.
fn damaged(edit: impl FnOnce(&mut Vec<u8>)) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture_dir("cuda_workload");
    for f in fs::read_dir(&src).unwrap() {
        let f = f.unwrap();
        fs::copy(f.path(), tmp.path().join(f.file_name())).unwrap();
    }
    let raw = tmp.path().join(RAW_BUFFERS_FILE);
    let mut bytes = fs::read(&raw).unwrap();
    assert_eq!(bytes.len(), RAW_LEN);
    edit(&mut bytes);
    fs::write(&raw, bytes).unwrap();
    tmp
}

fn error_of(dir: &Path) -> String {
    match decode_all(dir) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn truncated_last_chunk_is_a_warning_naming_chunk_and_byte() {
    // Cut inside chunk 1's data, inside its header, and right after its magic.
    for cut in [
        RAW_LEN - 1,
        RAW_LEN - 100,
        SECOND_CHUNK as usize + 20,
        SECOND_CHUNK as usize + 8,
    ] {
        let dir = damaged(|b| b.truncate(cut));
        let (records, report) = decode_all(dir.path()).unwrap();
        assert_eq!(report.chunks, 1, "cut at {cut}");
        assert_eq!(records.len(), 305, "chunk 0's records, cut at {cut}");
        let [DumpWarning::Truncated(t)] = &report.warnings[..] else {
            panic!("cut at {cut}: {:?}", report.warnings)
        };
        assert_eq!((t.chunk, t.byte), (1, SECOND_CHUNK));
        assert_eq!(t.available, (cut as u64) - SECOND_CHUNK);
        assert_eq!(
            report.warnings[0].to_string(),
            format!(
                "cupti_monitor_raw_buffers.bin: truncated: chunk 1 at byte 15464 needs {} bytes \
                 but only {} remain; kept the 1 complete chunk before it",
                t.needed, t.available
            )
        );
    }
}

#[test]
fn bad_chunk_magic_is_an_error() {
    let dir = damaged(|b| b[SECOND_CHUNK as usize..][..8].copy_from_slice(b"XXXXXXXX"));
    assert_eq!(
        error_of(dir.path()),
        "cupti_monitor_raw_buffers.bin: chunk 1 at byte 15464: bad magic b\"XXXXXXXX\", \
         expected b\"CUPMRBUF\""
    );
}

#[test]
fn bad_chunk_version_is_an_error() {
    let dir = damaged(|b| b[SECOND_CHUNK as usize + 8] = 3);
    assert_eq!(
        error_of(dir.path()),
        "cupti_monitor_raw_buffers.bin: chunk 1 at byte 15464: unsupported chunk version 3, \
         expected 2"
    );
}

#[test]
fn chunk_size_larger_than_the_buffer_size_is_an_error() {
    let dir =
        damaged(|b| b[SECOND_CHUNK as usize + 20..][..4].copy_from_slice(&u32::MAX.to_le_bytes()));
    assert_eq!(
        error_of(dir.path()),
        "cupti_monitor_raw_buffers.bin: chunk 1 at byte 15464: valid size 4294967295 exceeds \
         the activity buffer size 1048576 that the meta declares (corrupt chunk header)"
    );
}

#[test]
fn chunk_size_past_eof_within_the_buffer_size_is_a_truncated_last_chunk() {
    let dir =
        damaged(|b| b[SECOND_CHUNK as usize + 20..][..4].copy_from_slice(&4096u32.to_le_bytes()));
    let (_, report) = decode_all(dir.path()).unwrap();
    let [DumpWarning::Truncated(t)] = &report.warnings[..] else {
        panic!("{:?}", report.warnings)
    };
    assert_eq!(
        (t.chunk, t.byte, t.needed, t.available),
        (1, SECOND_CHUNK, 48 + 4096, 216)
    );
}

#[test]
fn empty_raw_file_is_an_error() {
    let dir = damaged(Vec::clear);
    assert_eq!(
        error_of(dir.path()),
        "cupti_monitor_raw_buffers.bin: empty file (0 bytes)"
    );
}

#[test]
fn random_bytes_are_an_error() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    };
    for n in [1, 7, 47, 48, 4096, 100_000] {
        let bytes = random(n);
        let dir = damaged(|b| *b = bytes);
        let err = error_of(dir.path());
        assert!(
            err.starts_with("cupti_monitor_raw_buffers.bin: chunk 0 at byte 0: bad magic b\""),
            "{n}: {err}"
        );
    }
}

#[test]
fn garbage_records_end_their_chunk_with_a_counted_warning() {
    // Record 3 of chunk 0 (offset 136, after driver 40 + overhead 56 + driver 40) gets kind 77.
    let dir = damaged(|b| b[48 + 136..][..4].copy_from_slice(&77u32.to_le_bytes()));
    let (records, report) = decode_all(dir.path()).unwrap();
    assert_eq!(report.chunks, 2);
    // The 3 records of chunk 0 before the garbage, and chunk 1's 3 records.
    assert_eq!(records.len(), 6);
    let [DumpWarning::BadRecords {
        chunk,
        byte,
        skipped_bytes,
        ..
    }] = &report.warnings[..]
    else {
        panic!("{:?}", report.warnings)
    };
    assert_eq!((*chunk, *byte, *skipped_bytes), (0, 48 + 136, 15416 - 136));
    assert_eq!(
        report.warnings[0].to_string(),
        "cupti_monitor_raw_buffers.bin: chunk 0 at byte 184: record at offset 136: unknown \
         activity kind 77 for CUPTI 13.0; skipped the last 15280 bytes of this chunk"
    );
}

#[test]
fn missing_raw_file_names_it() {
    let dir = damaged(|_| {});
    fs::remove_file(dir.path().join(RAW_BUFFERS_FILE)).unwrap();
    let err = error_of(dir.path());
    assert!(
        err.starts_with("cupti_monitor_raw_buffers.bin: No such file"),
        "{err}"
    );
}

fn meta_error(meta: &[u8]) -> String {
    let dir = damaged(|_| {});
    fs::write(dir.path().join(META_FILE), meta).unwrap();
    error_of(dir.path())
}

fn meta_with(json: &str) -> Vec<u8> {
    let mut b = b"CUPMMETA".to_vec();
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&(json.len() as u32).to_le_bytes());
    b.extend_from_slice(json.as_bytes());
    b
}

#[test]
fn corrupt_meta_is_an_error_naming_the_file_and_byte() {
    let good = fs::read(fixture_dir("cuda_workload").join(META_FILE)).unwrap();
    let m = "cupti_monitor_meta.bin: ";
    assert_eq!(
        meta_error(b""),
        format!("{m}empty file (0 bytes), expected a 16-byte CUPMMETA header")
    );
    assert_eq!(
        meta_error(&good[..5]),
        format!("{m}5 bytes, too short for the 16-byte CUPMMETA header")
    );
    let mut bad = good.clone();
    bad[..4].copy_from_slice(b"\0\xffAB");
    assert_eq!(
        meta_error(&bad),
        format!("{m}byte 0: bad magic b\"\\x00\\xffABMETA\", expected b\"CUPMMETA\"")
    );
    let mut bad = good.clone();
    bad[8] = 1;
    assert_eq!(
        meta_error(&bad),
        format!("{m}byte 8: unsupported meta version 1, expected 2")
    );
    assert_eq!(
        meta_error(&good[..100]),
        format!("{m}byte 12: payload length 297, but 84 bytes follow the header")
    );
    let err = meta_error(&meta_with("{\"cupti_version\": 130001,"));
    assert!(
        err.starts_with(&format!("{m}byte 16: payload is not valid JSON: ")),
        "{err}"
    );
    assert_eq!(
        meta_error(&meta_with("[1,2]")),
        format!("{m}byte 16: payload is JSON but not an object: [1,2]")
    );
    assert_eq!(
        meta_error(&meta_with("{}")),
        format!("{m}no cupti_version key: cannot tell which CUPTI record layout the buffers use")
    );
    let err = meta_error(&meta_with("{\"cupti_version\": 25}"));
    assert!(
        err.starts_with(&format!(
            "{m}CUPTI API version 25 (cuptiGetVersion 25) has no record layout"
        )),
        "{err}"
    );
}

#[test]
fn malformed_side_files_name_file_and_line() {
    let dir = damaged(|_| {});
    fs::write(dir.path().join("kernel_names.tsv"), "123\tok\nnot a line\n").unwrap();
    assert_eq!(
        error_of(dir.path()),
        "kernel_names.tsv: line 2: no TAB between pointer and name in \"not a line\""
    );
    fs::write(dir.path().join("kernel_names.tsv"), "0x12\tname\n").unwrap();
    assert_eq!(
        error_of(dir.path()),
        "kernel_names.tsv: line 1: pointer \"0x12\" is not a decimal u64"
    );
    fs::remove_file(dir.path().join("kernel_names.tsv")).unwrap();
    fs::write(dir.path().join("user_annotations.json"), "{\"x\": \"y\"}").unwrap();
    assert_eq!(
        error_of(dir.path()),
        "user_annotations.json: line 1: key \"x\" is not an external id (decimal u64)"
    );
}

/// Deterministic bit flips, byte overwrites and truncations of both fixtures' raw files:
/// decoding returns Ok or Err, never panics.
#[test]
fn mutated_dumps_never_panic() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut outcomes = [0usize; 2];
    for i in 0..300 {
        let (a, b, c) = (next(), next(), next());
        let dir = damaged(|bytes| {
            let n = bytes.len();
            match i % 3 {
                0 => bytes[a as usize % n] ^= 1 << (b % 8),
                1 => bytes[a as usize % n..][..1].copy_from_slice(&[b as u8]),
                _ => bytes.truncate(a as usize % n),
            }
            if c % 4 == 0 {
                let p = (c as usize >> 8) % (n.saturating_sub(4).max(1));
                if let Some(s) = bytes.get_mut(p..p + 4) {
                    s.copy_from_slice(&((c >> 40) as u32).to_le_bytes());
                }
            }
        });
        outcomes[usize::from(decode_all(dir.path()).is_ok())] += 1;
    }
    assert!(outcomes[1] > 0, "{outcomes:?}");
}

#[test]
fn errors_are_typed() {
    let dir = damaged(Vec::clear);
    assert!(matches!(
        decode_all(dir.path()),
        Err(DumpError::EmptyFile { .. })
    ));
}
