//! Every command that writes a trace writes a Perfetto protobuf trace for an
//! output named `.pftrace` or `.pftrace.gz`, or with `--format pftrace`; JSON
//! otherwise. (What the .pftrace holds is checked against the JSON trace in
//! cupmon-trace's tests and tests/python/test_pftrace.py.)

use std::io::Read;
use std::path::Path;

use super::util::*;

const CPU: &str = r#"{"baseTimeNanoseconds":1790857026000000000,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":2,"ts":5.5,"dur":1.25}]}"#;
const WINDOW: &str = r#"{"events":[{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}]}"#;

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("cpu.json"), CPU).expect("write");
    std::fs::write(dir.path().join("window.json"), WINDOW).expect("write");
    copy_dump(&dir.path().join("dump"));
    dir
}

/// The file's bytes, gunzipped when they are gzip.
fn contents(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return raw;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&raw[..])
        .read_to_end(&mut out)
        .expect("gunzip");
    out
}

/// How many `Trace.packet`s the bytes hold, if they are exactly a sequence
/// of them (field 1, length-delimited), as a Perfetto trace is.
fn packets(bytes: &[u8]) -> Option<usize> {
    let varint = |pos: &mut usize| -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *bytes.get(*pos)?;
            *pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    };
    let (mut pos, mut n) = (0, 0);
    while pos < bytes.len() {
        if varint(&mut pos)? != 0x0a {
            return None;
        }
        pos += usize::try_from(varint(&mut pos)?).ok()?;
        n += 1;
    }
    (pos == bytes.len()).then_some(n)
}

fn run_ok(dir: &Path, line: &str) -> String {
    let args: Vec<&str> = line.split_whitespace().collect();
    let out = cupmon(dir, &args);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "cupmon {line}:\n{text}");
    text
}

/// Every command that writes a trace, writing OUT.
const TRACE_WRITERS: [&str; 8] = [
    "merge --cpu cpu.json --window window.json -o OUT",
    "export --window window.json -o OUT",
    "decode dump -o OUT",
    "decode dump --format chrome -o OUT",
    "decode dump --last 1h -o OUT",
    "decode dump --cpu cpu.json -o OUT",
    "demo -o OUT",
    "combine t.json -o OUT",
];

#[test]
fn every_trace_writer_writes_pftrace_for_a_pftrace_name() {
    let dir = scratch();
    run_ok(dir.path(), "export --window window.json -o t.json");
    for name in ["out.pftrace", "out.pftrace.gz"] {
        for line in TRACE_WRITERS {
            let line = line.replace("OUT", name);
            let text = run_ok(dir.path(), &line);
            let path = dir.path().join(name);
            let raw = std::fs::read(&path).expect("output");
            assert_eq!(
                raw.starts_with(&[0x1f, 0x8b]),
                name.ends_with(".gz"),
                "{line}"
            );
            let n = packets(&contents(&path));
            assert!(
                n.is_some_and(|n| n > 3),
                "cupmon {line}: not a Perfetto trace ({n:?})"
            );
            if !line.starts_with("combine") {
                assert!(text.contains("Perfetto protobuf"), "cupmon {line}: {text}");
            }
            std::fs::remove_file(&path).expect("rm");
        }
    }
}

#[test]
fn format_pftrace_is_the_explicit_form_and_format_json_overrides_the_name() {
    let dir = scratch();
    run_ok(dir.path(), "export --window window.json -o t.json");
    for line in [
        "merge --cpu cpu.json --window window.json --format FORMAT -o OUT",
        "export --window window.json --format FORMAT -o OUT",
        "decode dump --format FORMAT -o OUT",
        "decode dump --cpu cpu.json --format FORMAT -o OUT",
        "combine t.json --format FORMAT -o OUT",
    ] {
        for (format, out, pftrace) in [("pftrace", "o.trace", true), ("json", "o.pftrace", false)] {
            // decode's --format chooses window or trace; `chrome` is a trace in
            // the format OUT's name says, so only --format pftrace forces one.
            if line.starts_with("decode") && format == "json" {
                continue;
            }
            let line = line.replace("FORMAT", format).replace("OUT", out);
            run_ok(dir.path(), &line);
            let bytes = contents(&dir.path().join(out));
            if pftrace {
                assert!(
                    packets(&bytes).is_some(),
                    "cupmon {line}: not a Perfetto trace"
                );
            } else {
                let doc: serde_json::Value = serde_json::from_slice(&bytes)
                    .unwrap_or_else(|e| panic!("cupmon {line}: not JSON: {e}"));
                assert!(doc.get("traceEvents").is_some(), "cupmon {line}");
            }
        }
    }
}

#[test]
fn a_pftrace_given_to_combine_is_bad_input_naming_it() {
    let dir = scratch();
    run_ok(dir.path(), "export --window window.json -o t.pftrace");
    let out = cupmon(dir.path(), &["combine", "t.pftrace", "-o", "c.json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("t.pftrace") && err.contains("Chrome JSON"),
        "{err}"
    );
    assert!(!dir.path().join("c.json").exists());
}
