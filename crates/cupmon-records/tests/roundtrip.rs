//! Encoder and decoder agree, for every family declared under `src/kinds/` and every
//! CUPTI version's layout: records read back equal, fields a version lacks read as 0,
//! a proptest does the same for arbitrary field values and checks that the decoder
//! never panics on arbitrary bytes.

use cupmon_records::kinds::{decodable_kinds, family_of, Field, FAMILIES};
use cupmon_records::layout::GENERATIONS;
use cupmon_records::{
    decode_record, encode_record, encoded_size, ActivityKind, DecodeError, Layout, Record,
    RecordIter, RecordWriter,
};
use proptest::prelude::*;

fn layouts() -> impl Iterator<Item = Layout> {
    GENERATIONS
        .iter()
        .flat_map(|g| [g.api_versions.0, g.api_versions.1])
        .map(|api| Layout::for_api_version(api).unwrap())
}

/// A record of `kind` decoded from the newest layout's bytes `pattern` (so every field
/// the family declares has the pattern's value at its offset).
fn record_from(kind: ActivityKind, pattern: &[u8]) -> Record {
    let layout = Layout::newest();
    let mut buf = pattern.to_vec();
    buf.resize(512, 0);
    buf[..4].copy_from_slice(&kind.as_u32().to_le_bytes());
    decode_record(&buf, layout).unwrap().0
}

/// Bytes where no two bytes of a field are alike and no field is zero.
fn distinct_pattern() -> Vec<u8> {
    (0..512u32).map(|i| (i % 251 + 1) as u8).collect()
}

/// The little-endian value of `field` in `bytes` (0 past the end).
fn field_value(bytes: &[u8], field: &Field) -> Vec<u8> {
    bytes
        .get(field.offset..field.offset + field.size)
        .map_or_else(|| vec![0; field.size], <[u8]>::to_vec)
}

#[test]
fn every_family_starts_at_the_oldest_measured_version() {
    // The encoder relies on it: every Layout has a struct for every family.
    let oldest = GENERATIONS[0].api_versions.0;
    for family in FAMILIES {
        assert!(family.structs[0].since_api <= oldest, "{}", family.key);
        assert!(
            family
                .structs
                .windows(2)
                .all(|w| w[0].since_api < w[1].since_api && w[0].size <= w[1].size),
            "{}: structs only grow",
            family.key
        );
        assert_eq!(family.fields[0].c_name, "kind", "{}", family.key);
    }
}

#[test]
fn every_layout_round_trips_the_fields_it_has() {
    let pattern = distinct_pattern();
    for layout in layouts() {
        let api = layout.version().api();
        for kind in decodable_kinds() {
            let family = family_of(kind).unwrap();
            let newest = record_from(kind, &pattern);
            let mut w = RecordWriter::new(layout);
            assert_eq!(w.push(&newest), 0);
            assert_eq!(w.push(&newest), encoded_size(&newest, layout));
            let bytes = w.as_bytes();
            let size = layout.struct_layout(kind).unwrap().size;
            assert_eq!(bytes.len(), 2 * size.next_multiple_of(8));
            // The fields this version has keep their value, the others are not written.
            let present: Vec<&Field> = family.fields_for(api).collect();
            for field in family.fields {
                let want = if present.contains(&field) {
                    field_value(&pattern, field)
                } else {
                    vec![0; field.size]
                };
                if field.c_name == "kind" {
                    continue;
                }
                if field.offset + field.size <= size {
                    assert_eq!(
                        field_value(bytes, field),
                        want,
                        "{api} {kind:?} {}",
                        field.c_name
                    );
                }
            }
            let back: Vec<Record> = RecordIter::new(bytes, layout)
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(back.len(), 2);
            assert_eq!(back[0], back[1]);
            assert_eq!(back[0].kind(), kind);
            // Decoding again what was decoded and encoded changes nothing.
            let mut again = vec![0u8; encoded_size(&back[0], layout)];
            encode_record(&back[0], layout, &mut again).unwrap();
            assert_eq!(decode_record(&again, layout).unwrap().0, back[0]);
            if layout == Layout::newest() {
                assert_eq!(
                    back[0], newest,
                    "{kind:?}: the newest layout keeps every field"
                );
            }
        }
    }
}

#[test]
fn older_versions_lack_newer_fields() {
    let pattern = distinct_pattern();
    let old = Layout::for_api_version(18).unwrap();
    let decode_old = |kind| {
        let newest = record_from(kind, &pattern);
        let mut w = RecordWriter::new(old);
        w.push(&newest);
        decode_record(w.as_bytes(), old).unwrap().0
    };
    let Record::Kernel(k) = decode_old(ActivityKind::CONCURRENT_KERNEL) else {
        panic!()
    };
    assert_ne!(k.max_active_clusters, 0);
    assert_eq!((k.is_device_launched, k.priority), (0, 0));
    let Record::Memcpy(m) = decode_old(ActivityKind::MEMCPY) else {
        panic!()
    };
    assert_ne!(m.channel_type, 0);
    assert_eq!((m.is_device_launched, m.copy_count), (0, 0));
    let Record::Overhead(o) = decode_old(ActivityKind::OVERHEAD) else {
        panic!()
    };
    assert_ne!(o.end, 0);
    assert_eq!(o.correlation_id, 0);
    let Record::Memory(mem) = decode_old(ActivityKind::MEMORY2) else {
        panic!()
    };
    assert_ne!(mem.pool_utilized_size, 0);
    assert_eq!(mem.source_ptr, 0);
    let Record::MemoryPool(pool) = decode_old(ActivityKind::MEMORY_POOL) else {
        panic!()
    };
    assert_ne!(pool.utilized_size, 0);
    assert_eq!(pool.is_managed_pool, 0);
}

#[test]
fn encode_into_a_small_buffer_fails_without_writing() {
    let layout = Layout::cupti_13_0();
    let mut out = [0xAAu8; 100];
    let kernel = record_from(ActivityKind::CONCURRENT_KERNEL, &distinct_pattern());
    let err = encode_record(&kernel, layout, &mut out).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a CONCURRENT_KERNEL(10) record needs 216 bytes but only 100 are free in the buffer"
    );
    assert!(out.iter().all(|&b| b == 0xAA));
}

#[test]
fn decode_errors_name_kind_and_offset() {
    let layout = Layout::cupti_13_0();
    let pattern = distinct_pattern();
    let mut w = RecordWriter::new(layout);
    w.push(&record_from(ActivityKind::RUNTIME, &pattern));
    let mut bytes = w.into_bytes();
    bytes.extend_from_slice(&77u32.to_le_bytes());
    bytes.extend_from_slice(&[0; 36]);
    let errors: Vec<DecodeError> = RecordIter::new(&bytes, layout)
        .filter_map(Result::err)
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "record at offset 40: unknown activity kind 77 for CUPTI 13.0"
    );
    let mut w = RecordWriter::new(layout);
    w.push(&record_from(ActivityKind::CONCURRENT_KERNEL, &pattern));
    let bytes = &w.as_bytes()[..200];
    let err = RecordIter::new(bytes, layout).next().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "record at offset 0: CONCURRENT_KERNEL(10) record of 216 bytes runs past the buffer end (200 bytes left)"
    );
    let err = RecordIter::new(&[5, 0], layout)
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "record at offset 0: 2 trailing bytes, too few to hold a record kind"
    );
    assert!(RecordIter::new(&[], layout).next().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_records_round_trip(kind in prop::sample::select(decodable_kinds()),
                                    bytes in prop::collection::vec(any::<u8>(), 256),
                                    generation in 0..GENERATIONS.len()) {
        let record = record_from(kind, &bytes);
        // Newest layout: exact.
        let mut w = RecordWriter::new(Layout::newest());
        w.push(&record);
        prop_assert_eq!(&decode_record(w.as_bytes(), Layout::newest()).unwrap().0, &record);
        // Any layout: encode . decode is idempotent and keeps the common fields.
        let layout = Layout::for_api_version(GENERATIONS[generation].api_versions.0).unwrap();
        let mut w = RecordWriter::new(layout);
        w.push(&record);
        w.push(&record);
        let back: Vec<Record> = RecordIter::new(w.as_bytes(), layout).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back.len(), 2);
        prop_assert_eq!(&back[0], &back[1]);
        prop_assert_eq!(back[0].kind(), record.kind());
        prop_assert_eq!(back[0].span(), record.span());
        let mut w2 = RecordWriter::new(layout);
        w2.push(&back[0]);
        prop_assert_eq!(w2.as_bytes(), &w.as_bytes()[..w2.len()]);
    }

    #[test]
    fn decoder_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048),
                            kinds in prop::collection::vec(prop::sample::select(vec![1u32, 2, 3, 4, 5, 10, 17, 36, 38, 39, 49, 50, 0, 77]), 0..16),
                            generation in 0..GENERATIONS.len()) {
        // Sprinkle valid kinds at 8-byte boundaries so that records decode for a while.
        let mut bytes = bytes;
        let mut at = 0;
        for k in kinds {
            if at + 4 > bytes.len() { break; }
            bytes[at..at + 4].copy_from_slice(&k.to_le_bytes());
            at += 40 + (k as usize % 3) * 8;
        }
        let layout = Layout::for_api_version(GENERATIONS[generation].api_versions.0).unwrap();
        let mut last = 0;
        for item in RecordIter::new(&bytes, layout).with_offsets() {
            match item {
                Ok((offset, _)) => { prop_assert!(offset >= last); last = offset; }
                Err(e) => prop_assert!(e.offset() <= bytes.len()),
            }
        }
    }
}
