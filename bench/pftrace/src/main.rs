//! Writing GPU-shaped traces (see `workload`): events/s, bytes and peak RSS
//! of cupmon-pftrace (`hand`, `gz`), of the same events as cupmon's Chrome
//! JSON (`json`, `json-gz`), of prost messages generated from Perfetto's
//! protos (`prost`, with `--features prost`), and of generating the events
//! alone (`gen`, the baseline the others include). (The `convert` modes, JSON
//! text through cupmon-trace's JSON-to-Perfetto conversion, are gone with that
//! conversion: cupmon's writers give the Perfetto writer typed events; their
//! cost end to end is `formats.py`'s.)
//!
//! usage: cargo run --release -p cupmon-bench-pftrace [--features prost] --
//!        --mode hand|gz|json|json-gz|prost|gen [--slices 1000000]
//!        [--runs 3] [--out PATH]
//!
//! A slice is one `X` event: a launch and its kernel are two. Each run writes
//! the whole trace to `--out` (default: a file in the temp dir, removed after;
//! the page cache absorbs it, so disk speed is not measured). Run one mode
//! per process: the peak RSS printed at the end is the process's (VmHWM).

mod hand;
mod json;
#[cfg(feature = "prost")]
mod prost_enc;
mod workload;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

use workload::{kernel_names, Workload};

struct Args {
    mode: String,
    slices: u64,
    runs: usize,
    out: Option<PathBuf>,
}

fn parse_args() -> Args {
    let mut a = Args {
        mode: "hand".into(),
        slices: 1_000_000,
        runs: 3,
        out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--mode" => a.mode = value,
            "--slices" => a.slices = value.parse().expect("--slices N"),
            "--runs" => a.runs = value.parse().expect("--runs N"),
            "--out" => a.out = Some(value.into()),
            _ => panic!("unknown flag {flag}"),
        }
    }
    a
}

fn gz(f: File) -> GzEncoder<BufWriter<File>> {
    // Level 1, as cupmon writes .json.gz (crates/cupmon-trace/src/output.rs).
    GzEncoder::new(BufWriter::with_capacity(1 << 20, f), Compression::fast())
}

/// Writes one trace; returns the number of slices written.
fn run(mode: &str, slices: u64, file: File) -> u64 {
    let pairs = slices / 2;
    let names = kernel_names();
    let work = Workload::new(pairs);
    match mode {
        "gen" => {
            let mut sum = 0u64;
            for p in work {
                sum = sum.wrapping_add(p.kernel_ts ^ p.launch_ts);
            }
            std::hint::black_box(sum);
        }
        "hand" | "gz" => {
            let sink: Box<dyn Write> = if mode == "gz" {
                Box::new(gz(file))
            } else {
                Box::new(file)
            };
            let mut w = hand::Hand::new(sink, names).expect("writer");
            for p in work {
                w.pair(&p).expect("slice");
            }
            let (mut sink, summary) = w.finish().expect("finish");
            sink.flush().expect("flush");
            drop(sink);
            assert_eq!(summary.slices, 2 * pairs);
            assert_eq!(summary.overlap_slices, 0);
        }
        "json" | "json-gz" => {
            let sink: Box<dyn Write> = if mode == "json-gz" {
                Box::new(gz(file))
            } else {
                Box::new(file)
            };
            let mut w = json::JsonWriter::new(sink, names);
            for p in work {
                w.pair(&p).expect("write");
            }
            w.finish().expect("finish");
        }
        #[cfg(feature = "prost")]
        "prost" => {
            let mut w = prost_enc::ProstWriter::new(file, names);
            for p in work {
                w.pair(&p).expect("write");
            }
            w.finish().expect("finish");
        }
        other => panic!("unknown mode {other} (prost needs --features prost)"),
    }
    2 * pairs
}

/// CPU time of this (single-threaded) process so far, in seconds: the
/// machine is shared, so wall time includes waiting for a core.
fn cpu_secs() -> f64 {
    let s = std::fs::read_to_string("/proc/self/schedstat").unwrap_or_default();
    s.split_whitespace()
        .next()
        .and_then(|ns| ns.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1e9
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let a = parse_args();
    let path = a.out.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("bench-pftrace-{}.{}", std::process::id(), a.mode))
    });
    for r in 0..a.runs {
        let file = File::create(&path).expect("output file");
        let (t, cpu0) = (Instant::now(), cpu_secs());
        let n = run(&a.mode, a.slices, file);
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_secs() - cpu0;
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        println!(
            "mode={} run={} slices={n} secs={secs:.3} cpu_secs={cpu:.3} slices_per_cpu_s={:.0} bytes={bytes} bytes_per_slice={:.1}",
            a.mode,
            r + 1,
            n as f64 / cpu,
            bytes as f64 / n as f64
        );
    }
    println!("mode={} peak_rss_kib={}", a.mode, peak_rss_kib());
    if a.out.is_none() {
        std::fs::remove_file(&path).ok();
    }
}
