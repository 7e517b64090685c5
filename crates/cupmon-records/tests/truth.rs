//! Every record of each fixture's truth.jsonl (decoded by the recorder with CUPTI 13.0's
//! own struct definitions) decodes to identical field values, at the same chunk and offset.

use std::fs;

use super::common::{fixture_dir, truth_view, FIXTURES};
use cupmon_records::{ApiDomain, Dump, Record, RecordIter};
use serde_json::Value;

/// PyTorch's merge's `_vNNNN` stripping rule.
fn strip_version(name: &str) -> &str {
    match name.rsplit_once("_v") {
        Some((prefix, v)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => prefix,
        _ => name,
    }
}

#[test]
fn every_truth_record_decodes_identically() {
    for fixture in FIXTURES {
        let dir = fixture_dir(fixture);
        let truth: Vec<Value> = fs::read_to_string(dir.join("truth.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let dump = Dump::open(&dir).unwrap();
        let layout = dump.layout().unwrap();
        let mut chunks = dump.chunks().unwrap();
        let mut decoded = Vec::new();
        while let Some(chunk) = chunks.next_chunk().unwrap() {
            for item in RecordIter::new(chunk.data, layout).with_offsets() {
                let (offset, record) = item.unwrap();
                decoded.push((chunk.number, offset, record));
            }
        }
        assert!(chunks.truncation().is_none());
        assert_eq!(decoded.len(), truth.len(), "{fixture}: record count");
        for ((chunk, offset, record), t) in decoded.iter().zip(&truth) {
            let at = format!("{fixture} chunk {chunk} offset {offset}");
            assert_eq!(t["chunk"], *chunk, "{at}");
            assert_eq!(t["offset"], *offset, "{at}");
            let view = truth_view(record);
            for (key, want) in t.as_object().unwrap() {
                match key.as_str() {
                    "chunk" | "offset" => {}
                    "name" => {
                        let Record::Kernel(k) = record else {
                            panic!("{at}: name on non-kernel")
                        };
                        assert_eq!(dump.kernel_names().get(k.name_ptr), want.as_str(), "{at}");
                    }
                    "cupti_name" => {
                        let Record::Api(a) = record else {
                            panic!("{at}: cupti_name on non-API")
                        };
                        let want = strip_version(want.as_str().unwrap());
                        assert_eq!(a.known_name(), Some(want), "{at}");
                    }
                    _ => assert_eq!(view.get(key), Some(want), "{at}: field {key}"),
                }
            }
        }
    }
}

#[test]
fn api_domains_follow_the_kind() {
    let dump = Dump::open(fixture_dir("cuda_workload")).unwrap();
    let mut chunks = dump.chunks().unwrap();
    let chunk = chunks.next_chunk().unwrap().unwrap();
    let first = RecordIter::new(chunk.data, dump.layout().unwrap())
        .next()
        .unwrap()
        .unwrap();
    let Record::Api(api) = first else {
        panic!("first record is a driver call")
    };
    assert_eq!(api.domain(), ApiDomain::Driver);
    assert_eq!(api.cbid, 673);
}
