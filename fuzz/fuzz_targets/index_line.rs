//! A line of `segments/index.jsonl` from arbitrary bytes ([`parse_index_line`]: its
//! checksum, then the JSON): a closed or retired line, or a problem to warn of, never
//! a panic. A line that parses is written back (sealed) and parses to the same.
#![no_main]

use cupmon_records::dump::{parse_index_line, IndexLine};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let text = text.trim_end_matches(['\n', '\r']);
    match parse_index_line(text) {
        Ok(line) => {
            let json = serde_json::to_string(&line).unwrap();
            let again: IndexLine = serde_json::from_str(&json).unwrap();
            assert_eq!(again, line);
        }
        Err(problem) => assert!(!problem.is_empty()),
    }
});
