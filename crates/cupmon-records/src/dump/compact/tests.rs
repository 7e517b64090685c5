//! The encoder's prediction rules (`split.rs`) and the decoder's (`join.rs`) agree for
//! every predictor, not only for those the cost estimate happens to pick.

use proptest::prelude::*;

use super::delta::Predictor;
use super::header::{Codec, CompactHeader, Transform};
use super::join::{join, JoinScratch};
use super::split::Splitter;
use super::{ChunkDecompressor, Frame};
use crate::kinds::{decodable_kinds, family_of};
use crate::{Layout, Record, RecordIter};

/// Records of random kinds whose timestamps are a clock with some zeros and whose other
/// bytes come from a few patterns, so that templates repeat.
fn buffer(layout: Layout, seed: u64, records: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let kinds = decodable_kinds();
    let mut clock = 1_000_000_000u64;
    let mut buf = Vec::new();
    for _ in 0..records {
        let kind = kinds[next() as usize % kinds.len()];
        let unit = layout
            .record_size(kind.as_u32())
            .unwrap()
            .next_multiple_of(8);
        let pattern = next() % 3;
        let start = buf.len();
        buf.extend((0..unit).map(|i| (pattern * 31 + i as u64 * 7) as u8));
        buf[start..start + 4].copy_from_slice(&kind.as_u32().to_le_bytes());
        clock += next() % 5000;
        for (n, &o) in family_of(kind).unwrap().timestamps.iter().enumerate() {
            if o + 8 <= unit {
                let t = if next() % 7 == 0 {
                    0
                } else {
                    clock + n as u64 * (next() % 3000)
                };
                buf[start + o..start + o + 8].copy_from_slice(&t.to_le_bytes());
            }
        }
    }
    buf
}

/// `data` split with `pick` into a stored chunk's header and section stream.
fn split_stored(
    data: &[u8],
    layout: Layout,
    pick: fn(&[Predictor]) -> Predictor,
) -> (CompactHeader, Vec<u8>) {
    let mut splitter = Splitter::default();
    splitter.force = Some(pick);
    let mut sections = Vec::new();
    let counts = splitter.split(data, &layout, &mut sections).unwrap();
    let header = CompactHeader {
        codec: Codec::Stored,
        transform: Transform::Columns,
        api_version: layout.version().api(),
        decompressed_len: data.len() as u32,
        record_count: counts.records,
        tail_len: counts.tail,
        section_len: sections.len() as u32,
        body_len: sections.len() as u32,
    };
    (header, sections)
}

fn round_trip_forced(data: &[u8], layout: Layout, pick: fn(&[Predictor]) -> Predictor) {
    round_trip_with(data, layout, pick, &mut JoinScratch::default());
}

/// [`round_trip_forced`] with the decoder's scratch of earlier buffers.
fn round_trip_with(
    data: &[u8],
    layout: Layout,
    pick: fn(&[Predictor]) -> Predictor,
    scratch: &mut JoinScratch,
) {
    let (header, sections) = split_stored(data, layout, pick);
    let mut out = Vec::new();
    join(&sections, &header, &layout, scratch, &mut out).unwrap();
    assert!(
        out == data,
        "{} bytes came back as {}",
        data.len(),
        out.len()
    );
}

fn last(c: &[Predictor]) -> Predictor {
    c[c.len() - 1]
}

fn first_field(c: &[Predictor]) -> Predictor {
    *c.iter()
        .find(|p| matches!(p, Predictor::Field(_)))
        .unwrap_or(&c[0])
}

fn other_prev(c: &[Predictor]) -> Predictor {
    *c.iter()
        .skip(1)
        .find(|p| matches!(p, Predictor::Prev(_)))
        .unwrap_or(&c[0])
}

fn template_step(c: &[Predictor]) -> Predictor {
    *c.iter()
        .find(|p| matches!(p, Predictor::TemplateStep(_)))
        .unwrap_or(&c[0])
}

const PICKS: [fn(&[Predictor]) -> Predictor; 5] =
    [|c| c[0], last, first_field, other_prev, template_step];

#[test]
fn every_predictor_round_trips_in_every_layout() {
    for g in crate::layout::GENERATIONS {
        let layout = Layout::for_api_version(g.api_versions.1).unwrap();
        let data = buffer(layout, u64::from(g.api_versions.1), 400);
        for pick in PICKS {
            round_trip_forced(&data, layout, pick);
        }
    }
}

#[test]
fn records_past_the_decode_window_and_a_reused_scratch_round_trip() {
    // Thousands of records of each kind cross the decoder's window of column values
    // many times; the smaller buffers after them reuse its scratch.
    let layout = Layout::cupti_13_0();
    let mut scratch = JoinScratch::default();
    for (seed, records) in [(7u64, 40_000usize), (8, 3), (9, 700), (10, 257)] {
        for pick in PICKS {
            round_trip_with(&buffer(layout, seed, records), layout, pick, &mut scratch);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn forced_predictors_round_trip(seed in any::<u64>(), records in 1..200usize, pick in 0..PICKS.len()) {
        let layout = Layout::cupti_13_0();
        round_trip_forced(&buffer(layout, seed, records), layout, PICKS[pick]);
    }
}

/// `data` split with `pick` into a stored compact chunk.
fn stored_chunk(data: &[u8], layout: Layout, pick: fn(&[Predictor]) -> Predictor) -> Vec<u8> {
    let (header, sections) = split_stored(data, layout, pick);
    let mut chunk = header.to_bytes().to_vec();
    chunk.extend_from_slice(&sections);
    chunk
}

/// What a walk reads from `chunk`: `(offset, record)` pairs, and whether they came
/// straight from the columns.
fn walked(chunk: &[u8], layout: Layout) -> (Vec<(usize, Record)>, bool) {
    let (mut d, mut out) = (ChunkDecompressor::new(layout), Vec::new());
    frame_records(d.frame(chunk, usize::MAX, &mut out).unwrap(), layout)
}

/// A frame's `(offset, record)` pairs, and whether they came straight from the
/// columns.
fn frame_records(frame: Frame<'_>, layout: Layout) -> (Vec<(usize, Record)>, bool) {
    match frame {
        Frame::Bytes(bytes) => (up_to_a_bad_record(bytes, layout), false),
        Frame::Records(frame) => {
            let mut records = Vec::new();
            frame.each(|o, r| records.push((o, r.clone()))).unwrap();
            (records, true)
        }
    }
}

/// The records of `data` up to one the layout cannot decode (a tail of garbage).
fn up_to_a_bad_record(data: &[u8], layout: Layout) -> Vec<(usize, Record)> {
    let records = RecordIter::new(data, layout).with_offsets();
    records.map_while(Result::ok).collect()
}

/// The records of `data` as the decoder reads them from its bytes.
fn parsed(data: &[u8], layout: Layout) -> Vec<(usize, Record)> {
    let records = RecordIter::new(data, layout).with_offsets();
    records.map(Result::unwrap).collect()
}

#[test]
fn records_from_the_columns_are_those_of_the_bytes_in_every_layout() {
    for g in crate::layout::GENERATIONS {
        let layout = Layout::for_api_version(g.api_versions.1).unwrap();
        let data = buffer(layout, u64::from(g.api_versions.1), 600);
        for pick in PICKS {
            let (records, typed) = walked(&stored_chunk(&data, layout, pick), layout);
            assert!(
                typed,
                "{layout:?}: the frame's records come from its columns"
            );
            assert_eq!(records, parsed(&data, layout), "{layout:?}");
        }
    }
}

#[test]
fn a_frame_with_bytes_after_its_records_is_read_from_its_bytes() {
    let layout = Layout::cupti_13_0();
    let mut data = buffer(layout, 5, 300);
    // A record of a kind no layout has: the split keeps it and what follows as the tail.
    data.extend_from_slice(&[0xee, 0, 0, 0, 1, 2, 3, 4]);
    let (records, typed) = walked(&stored_chunk(&data, layout, |c| c[0]), layout);
    assert!(!typed);
    assert_eq!(records, up_to_a_bad_record(&data, layout));
    assert_eq!(records.len(), 300);
}

/// Kernel records only, with varied timestamps and ids, two launch shapes.
fn kernels(layout: Layout, n: usize) -> Vec<u8> {
    let kind = crate::ActivityKind::CONCURRENT_KERNEL;
    let unit = layout
        .record_size(kind.as_u32())
        .unwrap()
        .next_multiple_of(8);
    let mut buf = vec![0u8; unit * n];
    for (i, rec) in buf.chunks_exact_mut(unit).enumerate() {
        let i = i as u64;
        rec[..4].copy_from_slice(&kind.as_u32().to_le_bytes());
        for (o, v) in [(16, 1_000_000 + 97 * i), (24, 1_000_500 + 97 * i + i % 7)] {
            rec[o..o + 8].copy_from_slice(&v.to_le_bytes());
        }
        rec[52..56].copy_from_slice(&(1 + (i % 2) as u32 * 63).to_le_bytes());
        rec[84..88].copy_from_slice(&0x1111_2222u32.to_le_bytes());
        rec[92..96].copy_from_slice(&(500 + 3 * i as u32).to_le_bytes());
    }
    buf
}

#[test]
fn a_delta_field_across_two_record_fields_is_read_from_the_rebuilt_bytes() {
    let layout = Layout::cupti_13_0();
    let data = kernels(layout, 200);
    let mut chunk = stored_chunk(&data, layout, |c| c[0]);
    let (records, typed) = walked(&chunk, layout);
    assert!(typed);
    assert_eq!(records, parsed(&data, layout));
    // Move the delta field of `correlation_id` (bytes 92..96) to bytes 86..90, half
    // in `localMemoryPerThread` (84..88), half in `localMemoryTotal` (88..92): the
    // frame still rebuilds, and a decode of its bytes reads both halves.
    let table = super::COMPACT_HEADER_LEN + 14;
    let fields = chunk[super::COMPACT_HEADER_LEN + 13] as usize;
    let at = (0..fields)
        .map(|f| table + 14 * f)
        .find(|&p| chunk[p..p + 2] == 92u16.to_le_bytes())
        .expect("correlation_id is a delta field");
    chunk[at..at + 2].copy_from_slice(&86u16.to_le_bytes());
    let mut joined = Vec::new();
    let body = &chunk[super::COMPACT_HEADER_LEN..];
    let header = CompactHeader::parse(&chunk).unwrap();
    join(
        body,
        &header,
        &layout,
        &mut JoinScratch::default(),
        &mut joined,
    )
    .unwrap();
    let (records, typed) = walked(&chunk, layout);
    assert!(
        !typed,
        "a delta field that is no one record field: the bytes are rebuilt"
    );
    assert_eq!(records, parsed(&joined, layout));
    match &records[1].1 {
        Record::Kernel(k) => assert_ne!(k.local_memory_total, 0x1111_2222),
        other => panic!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_buffers_give_the_same_records_from_columns_and_bytes(
        seed in any::<u64>(), records in 1..300usize, pick in 0..PICKS.len()
    ) {
        let layout = Layout::cupti_13_0();
        let data = buffer(layout, seed, records);
        let (got, _) = walked(&stored_chunk(&data, layout, PICKS[pick]), layout);
        prop_assert_eq!(got, parsed(&data, layout));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// A damaged frame: a walk and a rebuild agree byte for byte on its records, or
    /// both refuse it (the walk never panics and never gives records the rebuild
    /// would not).
    #[test]
    fn a_damaged_frame_gives_the_rebuilds_records_or_its_error(
        seed in any::<u64>(),
        records in 1..120usize,
        pick in 0..PICKS.len(),
        damage in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..4),
    ) {
        let layout = Layout::cupti_13_0();
        let mut chunk = stored_chunk(&buffer(layout, seed, records), layout, PICKS[pick]);
        let body = chunk.len() - super::COMPACT_HEADER_LEN;
        for &(at, byte) in &damage {
            chunk[super::COMPACT_HEADER_LEN + usize::from(at) % body] ^= byte | 1;
        }
        let rebuilt = ChunkDecompressor::new(layout).decompress(&chunk, usize::MAX);
        let (mut d, mut out) = (ChunkDecompressor::new(layout), Vec::new());
        match (d.frame(&chunk, usize::MAX, &mut out), rebuilt) {
            (Ok(frame), Ok(bytes)) => {
                let (got, _) = frame_records(frame, layout);
                prop_assert_eq!(got, up_to_a_bad_record(&bytes, layout));
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            (a, b) => prop_assert!(false, "walk {:?}, rebuild {:?}", a.map(|_| ()), b.map(|_| ())),
        }
    }
}
