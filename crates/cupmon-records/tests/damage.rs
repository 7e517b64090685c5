//! Damaged raw-buffer files: a truncated last chunk is a warning (all complete chunks
//! decoded); a damaged chunk header is skipped up to the next valid one, a zero-filled
//! tail is reported as a power loss leaves it, each with a warning naming the byte
//! range; an empty, all-zero or random file is an error naming the file, chunk and
//! byte; garbage records end their chunk with a counted warning. Nothing panics.

use std::fs;
use std::path::Path;

use super::common::{damaged_copy, decode_all, records_by_chunk};
use cupmon_records::dump::{chunk_headers, ChunkDamage, SkippedBytes, ZeroTail, RAW_BUFFERS_FILE};
use cupmon_records::{DumpError, DumpWarning, Record};

const SECOND_CHUNK: u64 = 15464; // cuda_workload: chunk 0 is 48 + 15416 bytes
const RAW_LEN: usize = 15680;
// torch_mlp: chunks of 33480, 97704 and 112 bytes.
const MLP_CHUNK_1: usize = 33528;
const MLP_CHUNK_2: usize = 131_280;
const MLP_LEN: usize = 131_440;

/// A copy of the cuda_workload dump whose raw-buffer file is `edit`ed.
pub(super) fn damaged(edit: impl FnOnce(&mut Vec<u8>)) -> tempfile::TempDir {
    damaged_copy("cuda_workload", |bytes| {
        assert_eq!(bytes.len(), RAW_LEN);
        edit(bytes);
    })
}

/// A change to a raw-buffer file's bytes.
type Edit = fn(&mut Vec<u8>);

/// A copy of the torch_mlp dump (three chunks) whose raw-buffer file is `edit`ed.
fn damaged_mlp(edit: impl FnOnce(&mut Vec<u8>)) -> tempfile::TempDir {
    damaged_copy("torch_mlp", |bytes| {
        assert_eq!(bytes.len(), MLP_LEN);
        edit(bytes);
    })
}

/// The records of torch_mlp's chunks 0 and 2, which survive damage to chunk 1, without
/// their timestamps (see [`untimed`]).
fn mlp_chunks_0_and_2() -> Vec<Record> {
    let (chunks, report) = records_by_chunk(super::common::fixture_dir("torch_mlp")).unwrap();
    assert_eq!(chunks.len(), 3);
    assert!(report.clock_converted > 0);
    untimed([chunks[0].clone(), chunks[2].clone()].concat())
}

/// `records` with every timestamp 0. torch_mlp's records are on torch.profiler's clock,
/// converted with samples that include the chunk headers' completion times: with a
/// header lost the fit moves by a few microseconds, every record still being there.
fn untimed(mut records: Vec<Record>) -> Vec<Record> {
    for r in &mut records {
        r.map_timestamps(&|_| 0);
    }
    records
}

pub(super) fn error_of(dir: &Path) -> String {
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

/// The one warning of a decode that kept cuda_workload's chunk 0 and skipped the rest.
fn skipped_last_chunk(dir: &Path) -> SkippedBytes {
    let (records, report) = decode_all(dir).unwrap();
    assert_eq!((report.chunks, records.len()), (1, 305));
    let [DumpWarning::Skipped(s)] = &report.warnings[..] else {
        panic!("{:?}", report.warnings)
    };
    assert_eq!((s.chunk, s.from, s.to), (1, SECOND_CHUNK, RAW_LEN as u64));
    assert!(!s.resumed && !s.all_zero);
    s.clone()
}

#[test]
fn bad_chunk_magic_of_the_last_chunk_is_a_skipped_range_not_an_error() {
    let dir = damaged(|b| b[SECOND_CHUNK as usize..][..8].copy_from_slice(b"XXXXXXXX"));
    let s = skipped_last_chunk(dir.path());
    assert_eq!(
        s.to_string(),
        "cupti_monitor_raw_buffers.bin: skipped bytes 15464..15680 (216 bytes): chunk 1 at \
         byte 15464: bad magic b\"XXXXXXXX\", expected b\"CUPMRBUF\"; no valid chunk header \
         follows; kept the 1 complete chunk before it"
    );
}

#[test]
fn bad_chunk_version_of_the_last_chunk_is_a_skipped_range_not_an_error() {
    let dir = damaged(|b| b[SECOND_CHUNK as usize + 8] = 3);
    let s = skipped_last_chunk(dir.path());
    assert_eq!(
        s.damage,
        ChunkDamage::BadVersion {
            found: 3,
            expected: 2
        }
    );
    assert!(
        s.to_string()
            .contains("chunk 1 at byte 15464: unsupported chunk version 3, expected 2;"),
        "{s}"
    );
}

#[test]
fn chunk_size_larger_than_the_buffer_size_is_a_skipped_range_not_an_error() {
    let dir =
        damaged(|b| b[SECOND_CHUNK as usize + 20..][..4].copy_from_slice(&u32::MAX.to_le_bytes()));
    let s = skipped_last_chunk(dir.path());
    assert!(
        s.to_string().contains(
            "chunk 1 at byte 15464: valid size 4294967295 exceeds the activity buffer size \
             1048576 that the meta declares;"
        ),
        "{s}"
    );
}

#[test]
fn bad_chunk_header_in_the_middle_is_skipped_and_reading_resumes_at_the_next_chunk() {
    let want = mlp_chunks_0_and_2();
    let edits: [(&str, Edit); 4] = [
        ("magic", |b| b[MLP_CHUNK_1..][..4].copy_from_slice(b"XXXX")),
        ("version", |b| b[MLP_CHUNK_1 + 8] = 7),
        ("size past the buffer size", |b| {
            b[MLP_CHUNK_1 + 20..][..4].copy_from_slice(&(2u32 << 20).to_le_bytes())
        }),
        // Within the buffer size but past the end: a valid header follows, so this
        // was not a cut last chunk.
        ("size past the end", |b| {
            b[MLP_CHUNK_1 + 20..][..4].copy_from_slice(&(1u32 << 20).to_le_bytes())
        }),
    ];
    for (what, edit) in edits {
        let dir = damaged_mlp(edit);
        let (records, report) = decode_all(dir.path()).unwrap();
        assert_eq!(report.chunks, 2, "{what}");
        assert!(
            untimed(records) == want,
            "{what}: chunks 0 and 2 decode as before"
        );
        let [DumpWarning::Skipped(s)] = &report.warnings[..] else {
            panic!("{what}: {:?}", report.warnings)
        };
        assert_eq!(
            (s.chunk, s.from, s.to, s.resumed, s.all_zero),
            (1, MLP_CHUNK_1 as u64, MLP_CHUNK_2 as u64, true, false),
            "{what}"
        );
        let text = s.to_string();
        assert!(
            text.starts_with(
                "cupti_monitor_raw_buffers.bin: skipped bytes 33528..131280 (97752 bytes): \
                 chunk 1 at byte 33528: "
            ) && text.ends_with("; resumed at the valid chunk header at byte 131280"),
            "{what}: {text}"
        );
    }
}

#[test]
fn garbage_before_the_first_chunk_is_skipped_and_the_chunks_after_it_kept() {
    let (records, _) = decode_all(super::common::fixture_dir("torch_mlp")).unwrap();
    let dir = damaged_mlp(|b| {
        b.splice(0..0, *b"torn write");
    });
    let (got, report) = decode_all(dir.path()).unwrap();
    assert!(got == records);
    let [DumpWarning::Skipped(s)] = &report.warnings[..] else {
        panic!("{:?}", report.warnings)
    };
    assert_eq!((s.chunk, s.from, s.to), (0, 0, 10));
}

#[test]
fn zero_filled_hole_in_the_middle_is_skipped_as_all_zero() {
    let dir = damaged_mlp(|b| b[MLP_CHUNK_1..MLP_CHUNK_2].fill(0));
    let (records, report) = decode_all(dir.path()).unwrap();
    assert!(untimed(records) == mlp_chunks_0_and_2());
    let [DumpWarning::Skipped(s)] = &report.warnings[..] else {
        panic!("{:?}", report.warnings)
    };
    assert!(s.all_zero && s.resumed);
    assert!(
        s.to_string()
            .contains("skipped bytes 33528..131280 (97752 bytes, all zero): chunk 1 at byte 33528: bad magic b\"\\x00\\x00"),
        "{s}"
    );
}

#[test]
fn zero_filled_tail_is_reported_as_a_power_loss_leaves_it() {
    // The file's size reached the disk, the last chunk's bytes did not; or zeros were
    // appended past a complete last chunk.
    for (cut, zeros) in [
        (SECOND_CHUNK as usize, RAW_LEN - SECOND_CHUNK as usize),
        (RAW_LEN, 8192),
    ] {
        let dir = damaged(|b| {
            b.truncate(cut);
            b.resize(cut + zeros, 0);
        });
        let (records, report) = decode_all(dir.path()).unwrap();
        let kept = if cut == RAW_LEN { 2 } else { 1 };
        assert_eq!(report.chunks, kept);
        assert_eq!(records.len(), if kept == 2 { 308 } else { 305 });
        assert_eq!(
            report.warnings,
            [DumpWarning::ZeroTail(ZeroTail {
                file: RAW_BUFFERS_FILE.to_owned(),
                chunk: kept,
                from: cut as u64,
                bytes: zeros as u64,
            })]
        );
        assert_eq!(
            report.warnings[0].to_string(),
            format!(
                "cupti_monitor_raw_buffers.bin: {zeros} zero bytes at the end, as a power loss \
                 leaves (from byte {cut}); kept the {kept} complete chunk{} before them",
                if kept == 1 { "" } else { "s" }
            )
        );
    }
}

#[test]
fn garbage_then_a_zero_filled_tail_are_two_warnings() {
    let mut nonzero_end = 0;
    let dir = damaged(|b| {
        b[SECOND_CHUNK as usize..][..8].copy_from_slice(b"XXXXXXXX");
        nonzero_end = b.iter().rposition(|&x| x != 0).unwrap() as u64 + 1;
        b.resize(RAW_LEN + 4096, 0);
    });
    let (_, report) = decode_all(dir.path()).unwrap();
    let [DumpWarning::Skipped(s), DumpWarning::ZeroTail(z)] = &report.warnings[..] else {
        panic!("{:?}", report.warnings)
    };
    // The tail starts past the last non-zero byte (chunk 1's last record may end in zeros).
    assert_eq!(
        (s.from, s.to, s.resumed),
        (SECOND_CHUNK, nonzero_end, false)
    );
    assert_eq!(
        (z.from, z.bytes),
        (nonzero_end, RAW_LEN as u64 + 4096 - nonzero_end)
    );
}

#[test]
fn all_zero_raw_file_is_an_error() {
    let dir = damaged(|b| b.fill(0));
    assert_eq!(
        error_of(dir.path()),
        "cupti_monitor_raw_buffers.bin: all 15680 bytes are zero, as a power loss leaves: no \
         chunk survived"
    );
}

#[test]
fn clock_samples_come_from_the_chunks_after_damage_too() {
    let dir = damaged_mlp(|b| b[MLP_CHUNK_1..][..4].copy_from_slice(b"XXXX"));
    let headers = chunk_headers(&dir.path().join(RAW_BUFFERS_FILE)).unwrap();
    let all =
        chunk_headers(&super::common::fixture_dir("torch_mlp").join(RAW_BUFFERS_FILE)).unwrap();
    assert_eq!(headers, [all[0], all[2]]);
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
        let decoded = decode_all(dir.path());
        if let Ok((_, report)) = &decoded {
            assert_ranges_in_order(&report.warnings, dir.path());
        }
        outcomes[usize::from(decoded.is_ok())] += 1;
    }
    assert!(outcomes[1] > 0, "{outcomes:?}");
}

/// Skipped ranges and zero tails lie in the file, in order, without overlapping.
fn assert_ranges_in_order(warnings: &[DumpWarning], dir: &Path) {
    let len = fs::metadata(dir.join(RAW_BUFFERS_FILE)).unwrap().len();
    let mut end = 0;
    for w in warnings {
        let (from, to) = match w {
            DumpWarning::Skipped(s) => (s.from, s.to),
            DumpWarning::ZeroTail(z) => (z.from, z.from + z.bytes),
            _ => continue,
        };
        assert!(
            end <= from && from < to && to <= len,
            "{w} after byte {end}"
        );
        end = to;
    }
}

#[test]
fn errors_are_typed() {
    let dir = damaged(Vec::clear);
    assert!(matches!(
        decode_all(dir.path()),
        Err(DumpError::EmptyFile { .. })
    ));
}
