//! The record decoder over arbitrary bytes for every layout generation; every record it
//! decodes must survive encode -> decode unchanged.
#![no_main]

use cupmon_records::{decode_record, encode_record, layout::GENERATIONS, Layout, RecordIter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, buf)) = data.split_first() else { return };
    let table = &GENERATIONS[which as usize % GENERATIONS.len()];
    let layout = Layout::for_api_version(table.api_versions.0).unwrap();
    let mut out = [0u8; 512];
    let mut iter = RecordIter::new(buf, layout);
    while let Some(item) = iter.next_with_offset() {
        match item {
            Ok((offset, record)) => {
                assert!(offset < buf.len());
                let n = encode_record(&record, layout, &mut out).unwrap();
                let (again, next) = decode_record(&out[..n], layout).unwrap();
                assert_eq!(next, n);
                assert_eq!(again, record);
            }
            Err(e) => {
                assert!(e.offset() <= buf.len());
                let _ = e.to_string();
            }
        }
    }
});
