//! What crosses the control channel and what names it, from arbitrary bytes: a
//! request line (what the injected server reads from a client), an answer line (what
//! `cupmon status` / `cupmon window` read from a peer) and a `cupmon_control.json`.
//! Parsing never panics; what parses writes back and parses again.
#![no_main]

use cupmon_control::{parse_request, parse_response, ControlFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = parse_request(data) {
        let text = serde_json::to_vec(&request).unwrap();
        assert_eq!(parse_request(&text).unwrap(), request);
    }
    if let Ok(response) = parse_response(data) {
        // Floats (uptime, rates) need not come back bit for bit: it must parse again.
        let text = serde_json::to_vec(&response).unwrap();
        parse_response(&text).unwrap();
    }
    if let Some(file) = ControlFile::parse(data) {
        let text = serde_json::to_vec(&file).unwrap();
        assert_eq!(ControlFile::parse(&text), Some(file));
    }
});
