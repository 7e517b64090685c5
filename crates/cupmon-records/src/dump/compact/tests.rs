//! The encoder's prediction rules (`split.rs`) and the decoder's (`join.rs`) agree for
//! every predictor, not only for those the cost estimate happens to pick.

use proptest::prelude::*;

use super::delta::Predictor;
use super::header::{Codec, CompactHeader, Transform};
use super::join::{join, JoinScratch};
use super::split::Splitter;
use crate::kinds::{decodable_kinds, family_of};
use crate::Layout;

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
