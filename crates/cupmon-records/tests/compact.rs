//! Compact chunks (`dump::compact`): byte-exact round trips of the real fixtures'
//! buffers, of typed records of every kind in every CUPTI layout, of empty, odd-sized
//! and damaged buffers; and a decompressor that answers any input with a buffer or an
//! error naming what is wrong.

use cupmon_records::dump::compact::{
    compress_chunk, decompress_chunk, ChunkCompressor, Codec, CompactError, CompactHeader,
    CompactOptions, Transform, COMPACT_HEADER_LEN,
};
use cupmon_records::kinds::{decodable_kinds, family_of};
use cupmon_records::layout::GENERATIONS;
use cupmon_records::{decode_record, ActivityKind, Dump, Layout, Record, RecordIter, RecordWriter};
use proptest::prelude::*;

use crate::common::{fixture_dir, FIXTURES};

const MAX: usize = 64 << 20;

fn layouts() -> impl Iterator<Item = Layout> {
    GENERATIONS
        .iter()
        .flat_map(|g| [g.api_versions.0, g.api_versions.1])
        .map(|api| Layout::for_api_version(api).unwrap())
}

/// `data` compressed and decompressed with every option set; returns the default's header.
fn round_trip(data: &[u8], layout: Layout) -> CompactHeader {
    for bits in 0..8 {
        let options = CompactOptions {
            deltas: bits & 1 != 0,
            templates: bits & 2 != 0,
            adaptive: bits & 4 != 0,
        };
        let z = ChunkCompressor::with_options(layout, 1, options)
            .compress(data)
            .unwrap();
        let back = decompress_chunk(&z, layout, data.len()).unwrap();
        assert!(
            back == data,
            "{options:?}: {} bytes came back as {}",
            data.len(),
            back.len()
        );
    }
    let z = compress_chunk(data, layout, 1).unwrap();
    assert_eq!(decompress_chunk(&z, layout, data.len()).unwrap(), data);
    CompactHeader::parse(&z).unwrap()
}

fn fixture_chunks(name: &str) -> (Layout, Vec<Vec<u8>>) {
    let dump = Dump::open(fixture_dir(name)).unwrap();
    let mut reader = dump.chunks().unwrap();
    let mut chunks = Vec::new();
    while let Some(c) = reader.next_chunk().unwrap() {
        chunks.push(c.data.to_vec());
    }
    (dump.layout().unwrap(), chunks)
}

#[test]
fn fixture_buffers_round_trip_and_shrink() {
    for name in FIXTURES {
        let (layout, chunks) = fixture_chunks(name);
        assert!(!chunks.is_empty());
        let (mut raw, mut packed) = (0, 0);
        for data in &chunks {
            let h = round_trip(data, layout);
            let records = RecordIter::new(data, layout).count();
            // A chunk of a few records is smaller raw than its kind table.
            if h.transform == Transform::Columns || data.len() > 1024 {
                assert_eq!(
                    h.transform,
                    Transform::Columns,
                    "{name}: {} bytes",
                    data.len()
                );
                assert_eq!(
                    (h.record_count as usize, h.tail_len),
                    (records, 0),
                    "{name}"
                );
            }
            raw += data.len();
            packed += compress_chunk(data, layout, 1).unwrap().len();
        }
        // The records are small and few; even so the columns beat 5x.
        assert!(packed * 5 < raw, "{name}: {raw} bytes -> {packed}");
    }
}

/// Records of one kind decoded from one of four random byte patterns (as launches of a
/// few kernels repeat their configuration), their timestamps set to a plausible clock
/// (some zero, as CUPTI leaves unset ones) and the correlation ids increasing.
fn typed_records(kind: ActivityKind, count: usize, seed: u64) -> Vec<Record> {
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let spec = family_of(kind).unwrap();
    let corr = spec.fields.iter().find(|f| f.name == "correlation_id");
    let mut clock = 1_795_979_259_000_000_000u64;
    let patterns: Vec<Vec<u8>> = (0..4)
        .map(|_| (0..512).map(|_| next() as u8).collect())
        .collect();
    (0..count)
        .map(|i| {
            let mut bytes = patterns[next() as usize % 4].clone();
            bytes[..4].copy_from_slice(&kind.as_u32().to_le_bytes());
            clock += next() % 50_000;
            for (n, &o) in spec.timestamps.iter().enumerate() {
                let t = if next() % 5 == 0 {
                    0
                } else {
                    clock + n as u64 * (next() % 9_000)
                };
                bytes[o..o + 8].copy_from_slice(&t.to_le_bytes());
            }
            if let Some(f) = corr {
                bytes[f.offset..f.offset + 4].copy_from_slice(&(1000 + 3 * i as u32).to_le_bytes());
            }
            decode_record(&bytes, Layout::newest()).unwrap().0
        })
        .collect()
}

#[test]
fn typed_records_of_every_kind_and_layout_round_trip() {
    for layout in layouts() {
        let mut mixed = RecordWriter::new(layout);
        for (k, kind) in decodable_kinds().into_iter().enumerate() {
            let records = typed_records(kind, 300, k as u64 + 7);
            let mut one = RecordWriter::new(layout);
            for r in &records {
                one.push(r);
            }
            let h = round_trip(one.as_bytes(), layout);
            assert_eq!(h.record_count, 300, "{:?} {kind:?}", layout.version());
            for r in records.iter().step_by(3) {
                mixed.push(r);
            }
        }
        let h = round_trip(mixed.as_bytes(), layout);
        assert_eq!(h.transform, Transform::Columns);
        assert_eq!(h.tail_len, 0);
    }
}

#[test]
fn empty_odd_sized_and_undecodable_buffers_round_trip() {
    let layout = Layout::cupti_13_0();
    let mut w = RecordWriter::new(layout);
    for r in typed_records(ActivityKind::CONCURRENT_KERNEL, 20, 3) {
        w.push(&r);
    }
    let kernels = w.into_bytes();
    let h = round_trip(&[], layout);
    assert_eq!(
        (h.transform, h.decompressed_len, h.body_len),
        (Transform::Raw, 0, 0)
    );
    for len in 1..12 {
        let h = round_trip(&kernels[..len], layout);
        assert_eq!(h.transform, Transform::Raw, "{len} bytes: no whole record");
    }
    // A record cut short, an unknown kind, trailing bytes: the rest is kept verbatim.
    for cut in [216 * 3 + 100, 216 * 7 + 3, kernels.len() - 1] {
        let h = round_trip(&kernels[..cut], layout);
        assert_eq!(h.record_count as usize, cut / 216);
        assert_eq!(h.tail_len as usize, cut % 216);
    }
    let mut unknown = kernels[..216 * 5].to_vec();
    unknown.extend_from_slice(&77u32.to_le_bytes());
    unknown.extend_from_slice(&kernels[..216 * 5]);
    let h = round_trip(&unknown, layout);
    assert_eq!((h.record_count, h.tail_len), (5, 4 + 216 * 5));
    // Random bytes: a kind that happens to be known, then garbage.
    let noise: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    round_trip(&noise, layout);
}

#[test]
fn one_kernel_repeated_compresses_to_almost_nothing() {
    // The empty-kernel burst: the same launch 1000 times, 2 us apart.
    let layout = Layout::cupti_13_0();
    let mut w = RecordWriter::new(layout);
    let Record::Kernel(mut k) = typed_records(ActivityKind::CONCURRENT_KERNEL, 1, 9)[0].clone()
    else {
        unreachable!()
    };
    for i in 0..1000u64 {
        k.start = 1_795_979_259_000_000_000 + 2000 * i;
        k.end = k.start + 1500;
        k.completed = k.end;
        k.correlation_id = 100 + i as u32;
        k.grid_id = 7 + i as i64;
        w.push(&Record::Kernel(k.clone()));
    }
    let z = compress_chunk(w.as_bytes(), layout, 1).unwrap();
    assert_eq!(decompress_chunk(&z, layout, MAX).unwrap(), w.as_bytes());
    assert!(z.len() < 400, "216000 bytes -> {}", z.len());
}

/// `z` with its zstd body replaced by the section stream, stored, after `edit`.
fn stored(z: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut h = CompactHeader::parse(z).unwrap();
    assert_eq!(h.codec, Codec::Zstd);
    let mut sections = zstd::bulk::decompress(&z[COMPACT_HEADER_LEN..], MAX).unwrap();
    edit(&mut sections);
    h.codec = Codec::Stored;
    h.section_len = sections.len() as u32;
    h.body_len = sections.len() as u32;
    let mut out = h.to_bytes().to_vec();
    out.extend_from_slice(&sections);
    out
}

#[test]
fn corrupt_chunks_are_errors_that_name_the_problem() {
    let (layout, chunks) = fixture_chunks("cuda_workload");
    let data = &chunks[0];
    let z = compress_chunk(data, layout, 1).unwrap();
    let err = |bytes: &[u8], max| {
        decompress_chunk(bytes, layout, max)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(&z[..10], MAX),
        "compressed chunk of 10 bytes is shorter than its 32-byte header"
    );
    let mut bad = z.clone();
    bad[0] = b'X';
    assert_eq!(
        err(&bad, MAX),
        "compressed chunk: bad magic b\"XMPZ\", expected b\"CMPZ\""
    );
    assert_eq!(
        err(&z, data.len() - 1),
        format!(
            "compressed chunk decompresses to {} bytes, more than the {} bytes allowed",
            data.len(),
            data.len() - 1
        )
    );
    assert_eq!(
        err(&z[..z.len() - 1], MAX),
        format!(
            "compressed chunk: header says {} body bytes follow the header, {} do",
            z.len() - 32,
            z.len() - 33
        )
    );
    let newest = decompress_chunk(&z, Layout::newest(), MAX).unwrap_err();
    assert!(
        matches!(newest, CompactError::LayoutMismatch { stored: 130001, .. }),
        "{newest}"
    );
    // A flipped byte inside the zstd frame: zstd's checksum or its own checks catch it.
    let mut flipped = z.clone();
    let mid = COMPACT_HEADER_LEN + (z.len() - COMPACT_HEADER_LEN) / 2;
    flipped[mid] ^= 0x55;
    assert!(err(&flipped, MAX).starts_with("compressed chunk"));
    // Stored section streams, edited where the kind table lies.
    let plain = stored(&z, |_| {});
    assert_eq!(decompress_chunk(&plain, layout, MAX).unwrap(), *data);
    let unit = stored(&z, |s| s[2] = 99);
    assert!(
        err(&unit, MAX).starts_with("compressed chunk: kind table entry 0: kind 1 has "),
        "{}",
        err(&unit, MAX)
    );
    let cut = stored(&z, |s| s.truncate(s.len() - 1));
    assert!(
        err(&cut, MAX).contains("section stream ends inside templates"),
        "{}",
        err(&cut, MAX)
    );
    let count = stored(&z, |s| s[4] ^= 1); // kind 1's record count
    assert!(
        err(&count, MAX).contains("are inconsistent"),
        "{}",
        err(&count, MAX)
    );
}

/// Buffers of real-looking records of random kinds with random bytes in them, random
/// tails; every layout.
fn arbitrary_buffer() -> impl Strategy<Value = (Layout, Vec<u8>)> {
    let generations = GENERATIONS.len();
    (
        0..generations,
        prop::collection::vec(
            (prop::sample::select(decodable_kinds()), any::<u64>()),
            0..40,
        ),
        prop::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(|(g, records, tail)| {
            let layout = Layout::for_api_version(GENERATIONS[g].api_versions.0).unwrap();
            let mut buf = Vec::new();
            for (kind, seed) in records {
                let size = layout
                    .record_size(kind.as_u32())
                    .unwrap()
                    .next_multiple_of(8);
                let mut x = seed | 1;
                let start = buf.len();
                buf.extend((0..size).map(|i| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Mostly small values and zeros, as in real records.
                    if i % 8 > (x >> 61) as usize {
                        0
                    } else {
                        (x >> 33) as u8
                    }
                }));
                buf[start..start + 4].copy_from_slice(&kind.as_u32().to_le_bytes());
            }
            buf.extend_from_slice(&tail);
            (layout, buf)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_buffers_round_trip((layout, data) in arbitrary_buffer()) {
        let z = compress_chunk(&data, layout, 1).unwrap();
        prop_assert_eq!(decompress_chunk(&z, layout, data.len()).unwrap(), data);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400),
                                valid_header in any::<bool>()) {
        let layout = Layout::cupti_13_0();
        let mut input = bytes.clone();
        if valid_header && input.len() >= 32 {
            input[..6].copy_from_slice(b"CMPZ\x01\x00");
            input[6] %= 2;
            input[7] %= 2;
            input[8..12].copy_from_slice(&130001u32.to_le_bytes());
            let body = (input.len() - 32) as u32;
            input[28..32].copy_from_slice(&body.to_le_bytes());
        }
        if let Ok(out) = decompress_chunk(&input, layout, 1 << 16) {
            prop_assert!(out.len() <= 1 << 16);
        }
    }

    #[test]
    fn damaged_chunks_never_panic((layout, data) in arbitrary_buffer(),
                                  edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
                                  store in any::<bool>()) {
        let z = compress_chunk(&data, layout, 1).unwrap();
        let mut bad = if store && CompactHeader::parse(&z).unwrap().codec == Codec::Zstd {
            stored(&z, |_| {})
        } else {
            z
        };
        for (at, value) in edits {
            let i = at.index(bad.len());
            bad[i] = value;
        }
        if let Ok(out) = decompress_chunk(&bad, layout, data.len() + 64) {
            prop_assert!(out.len() <= data.len() + 64);
        }
    }
}
