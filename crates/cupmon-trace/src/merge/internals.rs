//! The merge's JSON stages one by one, for `bench/json` (the side-by-side of
//! this crate's JSON reader and writer against serde_json) and for the fuzz
//! targets in `fuzz/`. Not a public API: built only with the `internals` feature.

use std::io;
use std::path::Path;

use rustc_hash::FxHashMap;

use super::cpu_scan::scan_cpu_trace;
use super::entries::Entries;
use super::stream::{open_input, StreamBuf, StreamError};
use super::{merge_source, MergeOptions, MergeWindow, WindowSource};
use crate::chrome_events::ChromeEvents;
use crate::event::EventSink;
use crate::json::read::{parse_document, ReadError, Reader};
use crate::json::write::{write_json_float, write_value};
use crate::TraceError;

/// What pass 1 found, in plain numbers a second implementation can match.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanSummary {
    pub top_level_keys: Vec<String>,
    pub base_ns: Option<i128>,
    pub kept: u64,
    pub dropped: u64,
    /// Byte ranges (start, end) of the runs of kept events, leading `M` events first.
    pub head_runs: Vec<(u64, u64)>,
    pub tail_runs: Vec<(u64, u64)>,
    /// (External id, pid, tid) of every CPU op, in trace order.
    pub ops: usize,
    pub min_ts: f64,
    pub max_end_ts: f64,
}

/// Pass 1 over a CPU trace (`.gz` by name) with this crate's reader.
pub fn scan(path: &Path, max_event_bytes: u64) -> Result<ScanSummary, TraceError> {
    let src = open_input(path).map_err(|err| TraceError::Io {
        path: path.to_path_buf(),
        what: "cannot read",
        err,
    })?;
    let scan = scan_cpu_trace(src, max_event_bytes, &mut |_| {})
        .map_err(|e| TraceError::Window(format!("{}: pass 1 failed: {e:?}", path.display())))?;
    let runs = |r: &[std::ops::Range<u64>]| r.iter().map(|r| (r.start, r.end)).collect();
    Ok(ScanSummary {
        top_level_keys: scan.members.iter().map(|m| m.key.clone()).collect(),
        base_ns: scan.base_ns.as_ref().and_then(|b| b.as_ref().ok().copied()),
        kept: scan.events.count,
        dropped: scan.events.dropped,
        head_runs: runs(&scan.events.head),
        tail_runs: runs(&scan.events.tail),
        ops: scan.candidate_count(),
        min_ts: scan.range.min_ts,
        max_end_ts: scan.range.max_end_ts,
    })
}

/// The window's trace events (API calls, GPU work, flows), as the merge writes
/// them, with no CPU op to link to; returns how many were written.
pub fn write_window_events(
    window: &MergeWindow,
    base_ns: i128,
    out: &mut Vec<u8>,
) -> Result<u64, TraceError> {
    let no_ops = FxHashMap::default();
    let entries = Entries::new(window, base_ns, &no_ops, None);
    let mut sink = ChromeEvents::new(&mut *out);
    entries.write_events(&mut sink)?;
    let written = sink.written();
    sink.finish()?;
    Ok(written)
}

/// A float as Python's `json.dump` writes it (what a serde `Formatter` must do).
pub fn write_py_float(out: &mut impl io::Write, f: f64) -> io::Result<()> {
    let mut buf = Vec::with_capacity(32);
    write_json_float(&mut buf, f);
    out.write_all(&buf)
}

/// The JSON reader's invariants on arbitrary bytes (panics where one fails):
/// validating and parsing agree on where a value ends; a parsed value written
/// and parsed again writes the same; reading through a stream that hands out
/// a few bytes at a time gives what reading the whole slice gives.
pub fn check_json_reader(data: &[u8]) {
    let mut skip = Reader::new(data);
    let mut parse = Reader::new(data);
    let skipped = skip.skip_value().map(|()| skip.pos);
    let parsed = parse.value().map(|v| (v, parse.pos));
    match (&skipped, &parsed) {
        (Ok(end), Ok((_, pos))) => assert_eq!(end, pos, "skip and parse end apart"),
        (Err(a), Err(b)) => assert_eq!(a, b, "skip and parse fail apart"),
        (a, b) => panic!("skip gave {a:?}, parse gave {:?}", b.as_ref().map(|p| p.1)),
    }
    if let Ok((v, _)) = &parsed {
        let mut once = Vec::new();
        write_value(&mut once, v);
        let again = parse_document(&once).expect("a written value parses");
        let mut twice = Vec::new();
        write_value(&mut twice, &again);
        assert_eq!(once, twice, "write(parse(write(v))) != write(v)");
        let _ = (v.py_str(), v.py_json_dumps(), v.py_int(), v.py_float());
    }
    // The same value through a stream of 1-7 byte reads, with a space after it
    // so that a trailing number is complete.
    let mut text = data.to_vec();
    text.push(b' ');
    let whole = {
        let mut r = Reader::new(&text);
        r.skip_ws();
        let start = r.pos;
        r.value().map(|v| (v, start..r.pos))
    };
    let trickle = Trickle { data: &text, at: 0 };
    let streamed = StreamBuf::new(trickle, 1 << 20).step(|r| r.value());
    match (whole, streamed) {
        (Ok((a, range)), Ok((b, got))) => {
            let (mut wa, mut wb) = (Vec::new(), Vec::new());
            write_value(&mut wa, &a);
            write_value(&mut wb, &b);
            assert_eq!(wa, wb, "streamed value differs");
            assert_eq!((range.start as u64, range.end as u64), (got.start, got.end));
        }
        (Err(ReadError::Incomplete), Err(StreamError::Truncated { .. })) => {}
        (Err(ReadError::Syntax { pos, .. }), Err(StreamError::Syntax { offset, .. })) => {
            assert_eq!(pos as u64, offset, "syntax errors at different places");
        }
        (Err(ReadError::OverBudget), Err(StreamError::TooLarge { .. })) => {}
        (Err(_), Err(StreamError::TooLarge { .. })) if text.len() > 1 << 20 => {}
        (a, b) => panic!("slice gave {:?}, stream gave {b:?}", a.map(|x| x.1)),
    }
}

/// Hands out its bytes a few at a time, as a pipe or a gzip stream might.
struct Trickle<'a> {
    data: &'a [u8],
    at: usize,
}

impl io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (1 + self.at % 7)
            .min(buf.len())
            .min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The whole merge of an in-memory CPU trace and window into `output`, with
/// a small value limit (for the fuzz target: it must never panic).
pub fn merge_bytes(
    cpu: &[u8],
    window: &[u8],
    output: &Path,
    max_event_bytes: u64,
) -> Result<(), TraceError> {
    let window = MergeWindow::from_json(window, "window")?;
    let open = || -> io::Result<Box<dyn io::Read>> { Ok(Box::new(io::Cursor::new(cpu.to_vec()))) };
    let options = MergeOptions {
        trace_name: Some("fuzz".to_owned()),
        max_event_bytes,
        exact: false,
        format: None,
    };
    merge_source(
        "cpu",
        &open,
        WindowSource::Loaded(&window),
        output,
        &options,
        &mut |_| {},
        false,
    )
    .map(drop)
}

/// Whether `bytes` is one JSON document as Python's `json.loads` reads it.
pub fn is_json(bytes: &[u8]) -> bool {
    parse_document(bytes).is_some()
}
