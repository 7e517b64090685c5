//! Bytes per kernel record and CPU per million records of cupmon's compact chunk
//! encoding (`cupmon_records::dump::compact`) against plain zstd of the raw buffers,
//! and what each part of the encoding is worth (transposition, deltas, templates,
//! adaptive predictors), on three workloads:
//!
//! - the real H200 fixtures (small: 178 kernels among 3,500 records);
//! - a synthetic training job (200 kernel functions, 4 streams, a step of 1000 launches
//!   repeated, lognormal 5 us - 2 ms durations, see `workload::training`), 4 MiB buffers;
//! - an empty-kernel burst (the same kernel 1M times, 2 us apart).
//!
//! usage: cargo run --release -p cupmon-bench-compact -- [--runs 5] [--kernels 1000000]
//!        [--burst 1000000] [--names 200] [--streams 4] [--step 1000]
//!        [--only fixtures,training,burst] [--methods 0,1,...,7 (rows of the table)]
//!        [--stage on|off (libzstd vs ruzstd table)] [--fixtures tests/fixtures/h200-cupti13.0]
//!
//! Each method compresses every buffer of a workload with one reused compressor (as the
//! dump writer would) and decompresses them back (checked equal on the first run);
//! `--runs` repetitions, the methods round-robin within each, reporting the median and
//! [min..max] of the thread's CPU time (getrusage RUSAGE_THREAD) per million records.

mod rng;
mod workload;

use std::path::PathBuf;
use std::time::Instant;

use cupmon_records::dump::compact::{
    ChunkCompressor, ChunkDecompressor, CompactHeader, CompactOptions,
};
use nix::sys::resource::{getrusage, UsageWho};
use workload::Workload;

struct Args {
    runs: usize,
    kernels: u64,
    burst: u64,
    names: usize,
    streams: usize,
    step: usize,
    only: Vec<String>,
    methods: Vec<usize>,
    stage: bool,
    fixtures: PathBuf,
}

fn parse_args() -> Args {
    let mut a = Args {
        runs: 5,
        kernels: 1_000_000,
        burst: 1_000_000,
        names: 200,
        streams: 4,
        step: 1000,
        only: vec!["fixtures".into(), "training".into(), "burst".into()],
        methods: (0..METHODS.len()).collect(),
        stage: true,
        fixtures: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/h200-cupti13.0"
        )),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let number = || value.parse::<u64>().unwrap_or_else(|_| panic!("{flag} N"));
        match flag.as_str() {
            "--runs" => a.runs = number() as usize,
            "--kernels" => a.kernels = number(),
            "--burst" => a.burst = number(),
            "--names" => a.names = number() as usize,
            "--streams" => a.streams = number() as usize,
            "--step" => a.step = number() as usize,
            "--only" => a.only = value.split(',').map(str::to_owned).collect(),
            "--fixtures" => a.fixtures = value.into(),
            "--stage" => a.stage = value == "on",
            "--methods" => {
                a.methods = value
                    .split(',')
                    .map(|m| m.parse().expect("--methods 0,6"))
                    .collect()
            }
            _ => panic!("unknown flag {flag}"),
        }
    }
    a
}

/// One way of compressing a buffer.
#[derive(Clone, Copy)]
enum Method {
    Zstd(i32),
    Compact(i32, CompactOptions),
}

const fn options(deltas: bool, templates: bool, adaptive: bool) -> CompactOptions {
    CompactOptions {
        deltas,
        templates,
        adaptive,
    }
}

const METHODS: [(&str, Method); 8] = [
    ("zstd -1 of the raw buffer", Method::Zstd(1)),
    ("zstd -3 of the raw buffer", Method::Zstd(3)),
    (
        "columns only (byte-split records), zstd -1",
        Method::Compact(1, options(false, false, false)),
    ),
    (
        "columns + deltas (fixed predictors), zstd -1",
        Method::Compact(1, options(true, false, false)),
    ),
    (
        "columns + deltas (adaptive), zstd -1",
        Method::Compact(1, options(true, false, true)),
    ),
    (
        "templates + deltas (fixed predictors), zstd -1",
        Method::Compact(1, options(true, true, false)),
    ),
    (
        "compact default: templates + adaptive deltas, zstd -1",
        Method::Compact(1, options(true, true, true)),
    ),
    (
        "compact default, zstd -3",
        Method::Compact(3, options(true, true, true)),
    ),
];

/// CPU seconds this thread has used.
fn thread_cpu() -> f64 {
    let u = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 * 1e-6;
    t(u.user_time()) + t(u.system_time())
}

struct Pass {
    bytes: u64,
    sections: u64,
    compress_cpu: f64,
    compress_wall: f64,
    decompress_cpu: f64,
}

/// Compress and decompress every chunk `repeat` times with `method`.
fn pass(w: &Workload, method: Method, repeat: usize, check: bool) -> Pass {
    let mut packed: Vec<Vec<u8>> = vec![Vec::new(); w.chunks.len()];
    let (cpu, wall) = (thread_cpu(), Instant::now());
    match method {
        Method::Zstd(level) => {
            let mut z = zstd::bulk::Compressor::new(level).expect("zstd");
            for _ in 0..repeat {
                for (c, out) in w.chunks.iter().zip(&mut packed) {
                    *out = z.compress(c).expect("zstd compress");
                }
            }
        }
        Method::Compact(level, options) => {
            let mut z = ChunkCompressor::with_options(w.layout, level, options);
            for _ in 0..repeat {
                for (c, out) in w.chunks.iter().zip(&mut packed) {
                    z.compress_into(c, out).expect("compact compress");
                }
            }
        }
    }
    let (compress_cpu, compress_wall) = (thread_cpu() - cpu, wall.elapsed().as_secs_f64());
    let mut back = Vec::new();
    let cpu = thread_cpu();
    match method {
        Method::Zstd(_) => {
            let mut z = zstd::bulk::Decompressor::new().expect("zstd");
            for _ in 0..repeat {
                for (c, p) in w.chunks.iter().zip(&packed) {
                    back.clear();
                    back.reserve(c.len());
                    z.decompress_to_buffer(p, &mut back)
                        .expect("zstd decompress");
                    assert!(!check || back == *c, "zstd round trip");
                }
            }
        }
        Method::Compact(..) => {
            let mut z = ChunkDecompressor::new(w.layout);
            for _ in 0..repeat {
                for (c, p) in w.chunks.iter().zip(&packed) {
                    z.decompress_into(p, c.len(), &mut back)
                        .expect("compact decompress");
                    assert!(!check || back == *c, "compact round trip");
                }
            }
        }
    }
    let decompress_cpu = thread_cpu() - cpu;
    let bytes = packed.iter().map(|p| p.len() as u64).sum();
    let sections = packed
        .iter()
        .zip(&w.chunks)
        .map(|(p, c)| match method {
            Method::Zstd(_) => c.len() as u64,
            Method::Compact(..) => CompactHeader::parse(p).map_or(0, |h| h.section_len.into()),
        })
        .sum();
    Pass {
        bytes,
        sections,
        compress_cpu,
        compress_wall,
        decompress_cpu,
    }
}

/// Median and [min..max] of `xs`.
fn spread(mut xs: Vec<f64>) -> String {
    xs.sort_by(f64::total_cmp);
    let (lo, hi, mid) = (xs[0], xs[xs.len() - 1], xs[xs.len() / 2]);
    format!("{mid:.3} [{lo:.3}..{hi:.3}]")
}

fn report(w: &Workload, runs: usize, methods: &[usize]) {
    let bytes = w.bytes();
    // Small workloads are compressed several times per run, for timer resolution.
    let repeat = (64u64 << 20).div_ceil(bytes.max(1)) as usize;
    println!(
        "\n## {}: {} buffers, {} records ({} kernels), {:.1} MB raw, {:.1} B/kernel raw; \
         {runs} runs x {repeat} passes",
        w.name,
        w.chunks.len(),
        w.records,
        w.kernels,
        bytes as f64 / 1e6,
        bytes as f64 / w.kernels.max(1) as f64,
    );
    println!(
        "\n| method | B/kernel | B/record | ratio | before zstd, B/kernel | compress CPU s per M records | \
         compress MB/s (wall) | decompress CPU s per M records |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let per_m = |cpu: f64| cpu / (repeat as f64 * w.records as f64) * 1e6;
    let chosen: Vec<(&str, Method)> = methods
        .iter()
        .filter_map(|&m| METHODS.get(m).copied())
        .collect();
    // Round-robin: run r of every method, then run r + 1, so that a change of load on
    // the machine hits all methods alike.
    let mut all: Vec<Vec<Pass>> = chosen.iter().map(|_| Vec::new()).collect();
    for r in 0..runs {
        for ((_, method), passes) in chosen.iter().zip(&mut all) {
            passes.push(pass(w, *method, repeat, r == 0));
        }
    }
    for ((name, _), passes) in chosen.iter().zip(&all) {
        let p = &passes[0];
        let kernels = w.kernels.max(1) as f64;
        let mut walls: Vec<f64> = passes.iter().map(|p| p.compress_wall).collect();
        walls.sort_by(f64::total_cmp);
        println!(
            "| {name} | {:.2} | {:.2} | {:.1}x | {:.1} | {} | {:.0} | {} |",
            p.bytes as f64 / kernels,
            p.bytes as f64 / w.records as f64,
            bytes as f64 / p.bytes as f64,
            p.sections as f64 / kernels,
            spread(passes.iter().map(|p| per_m(p.compress_cpu)).collect()),
            repeat as f64 * bytes as f64 / 1e6 / walls[walls.len() / 2],
            spread(passes.iter().map(|p| per_m(p.decompress_cpu)).collect()),
        );
    }
}

/// The general-purpose stage alone: libzstd -1 (contexts reused) and pure-Rust ruzstd
/// (its fastest level, "roughly zstd -1"; `compress_to_vec` and a `FrameDecoder` per
/// buffer) on the raw buffers and on the compact section streams.
fn report_stage(w: &Workload, runs: usize) {
    let bytes = w.bytes();
    let repeat = (64u64 << 20).div_ceil(bytes.max(1)) as usize;
    let mut z = ChunkCompressor::new(w.layout, 1);
    let sections: Vec<Vec<u8>> = w
        .chunks
        .iter()
        .map(|c| {
            let packed = z.compress(c).expect("compact");
            let h = CompactHeader::parse(&packed).expect("header");
            let body = &packed[cupmon_records::dump::compact::COMPACT_HEADER_LEN..];
            match h.codec {
                cupmon_records::dump::compact::Codec::Zstd => {
                    zstd::bulk::decompress(body, h.section_len as usize).expect("body")
                }
                cupmon_records::dump::compact::Codec::Stored => body.to_vec(),
            }
        })
        .collect();
    println!("\n| general-purpose stage | input | B/kernel | compress CPU s per M records | decompress CPU s per M records |");
    println!("|---|---|---|---|---|");
    let per_m = |cpu: f64| cpu / (repeat as f64 * w.records as f64) * 1e6;
    let mut zc = zstd::bulk::Compressor::new(1).expect("zstd");
    let mut zd = zstd::bulk::Decompressor::new().expect("zstd");
    for (input_name, input) in [
        ("raw buffers", &w.chunks),
        ("compact section streams", &sections),
    ] {
        for rust in [false, true] {
            let mut stats = Vec::new();
            for run in 0..runs {
                let cpu = thread_cpu();
                let mut packed = Vec::new();
                for _ in 0..repeat {
                    packed = input
                        .iter()
                        .map(|c| {
                            if rust {
                                ruzstd::encoding::compress_to_vec(
                                    &c[..],
                                    ruzstd::encoding::CompressionLevel::Fastest,
                                )
                            } else {
                                zc.compress(c).expect("zstd")
                            }
                        })
                        .collect();
                }
                let compress = thread_cpu() - cpu;
                let cpu = thread_cpu();
                for _ in 0..repeat {
                    for (p, c) in packed.iter().zip(input) {
                        let back = if rust {
                            let mut d = ruzstd::decoding::FrameDecoder::new();
                            let mut out = Vec::with_capacity(c.len());
                            d.decode_all_to_vec(p, &mut out).expect("ruzstd");
                            out
                        } else {
                            zd.decompress(p, c.len()).expect("zstd")
                        };
                        assert!(run > 0 || back == *c, "round trip");
                    }
                }
                let size: usize = packed.iter().map(Vec::len).sum();
                stats.push((size, per_m(compress), per_m(thread_cpu() - cpu)));
            }
            println!(
                "| {} | {input_name} | {:.2} | {} | {} |",
                if rust {
                    "ruzstd 0.9 Fastest"
                } else {
                    "libzstd -1"
                },
                stats[0].0 as f64 / w.kernels.max(1) as f64,
                spread(stats.iter().map(|s| s.1).collect()),
                spread(stats.iter().map(|s| s.2).collect()),
            );
        }
    }
}

fn main() {
    let a = parse_args();
    println!(
        "# bench-compact, {} cores, load {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let mut workloads = Vec::new();
    for part in &a.only {
        match part.as_str() {
            "fixtures" => workloads.extend(workload::fixtures(&a.fixtures)),
            "training" => workloads.push(workload::training(a.kernels, a.names, a.streams, a.step)),
            "burst" => workloads.push(workload::burst(a.burst)),
            _ => panic!("--only: unknown workload {part} (fixtures, training, burst)"),
        }
    }
    for w in &workloads {
        report(w, a.runs, &a.methods);
        if a.stage {
            report_stage(w, a.runs);
        }
    }
}
