//! The merge's JSON stages with cupmon-trace's own reader/writer and with
//! serde_json, on the same inputs (those of bench/merge_bench.py), each stage
//! in a child process of its own so that its peak RSS is its own.
//!
//! usage: bench-json --cpu CPU.json --window WINDOW.json [--repeat 5]
//!
//! Stages (repetitions interleave them, so drift hits all alike):
//!   scan/own, scan/serde          pass 1 over the CPU trace (streamed, byte ranges kept)
//!   window/own, window/serde      the window read (streamed from the file)
//!   window/serde-slice            the window read by serde_json from a slice in memory
//!   write/own, write/serde        the window's trace events written (the window parsed
//!                                 beforehand, not timed)
//! Each child prints `wall_s vm_hwm_kib check`; `check` must agree between the
//! two implementations of a stage (pass 1's facts; the written bytes' hash).

mod serde_scan;
mod serde_window;
mod serde_write;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cupmon_trace::{internals, MergeWindow, DEFAULT_MAX_EVENT_BYTES};
use serde::Deserializer;

const STAGES: [&str; 7] = [
    "scan/own",
    "scan/serde",
    "window/own",
    "window/serde",
    "window/serde-slice",
    "write/own",
    "write/serde",
];

/// The bench's base time (bench/merge_bench.py's BASE_NS).
const BASE_NS: i128 = 1_790_857_026_000_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let cpu = PathBuf::from(arg("--cpu").unwrap_or_else(|| usage()));
    let window = PathBuf::from(arg("--window").unwrap_or_else(|| usage()));
    if let Some(stage) = arg("--one") {
        let (wall, check) = run_stage(&stage, &cpu, &window);
        println!("{wall:.4} {} {check}", vm_hwm_kib());
        return;
    }
    let repeat: usize = arg("--repeat").and_then(|r| r.parse().ok()).unwrap_or(5);
    let me = std::env::current_exe().expect("current exe");
    let mut runs: Vec<Vec<(f64, u64, String)>> = vec![Vec::new(); STAGES.len()];
    for _ in 0..repeat {
        for (i, stage) in STAGES.iter().enumerate() {
            let out = Command::new(&me)
                .args(["--one", stage, "--cpu"])
                .arg(&cpu)
                .arg("--window")
                .arg(&window)
                .output()
                .expect("run a stage");
            let text = String::from_utf8_lossy(&out.stdout);
            let f: Vec<&str> = text.split_whitespace().collect();
            if !out.status.success() || f.len() < 3 {
                eprintln!("{stage} failed: {}", String::from_utf8_lossy(&out.stderr));
                std::process::exit(1);
            }
            runs[i].push((
                f[0].parse().expect("wall"),
                f[1].parse().expect("rss"),
                f[2..].join(" "),
            ));
        }
    }
    println!("{repeat} repetitions, stages interleaved; wall time of the stage itself, peak RSS of its process");
    println!(
        "{:20} {:>9} {:>17} {:>13}  check",
        "stage", "median s", "min..max s", "peak RSS MiB"
    );
    for (stage, r) in STAGES.iter().zip(&runs) {
        let mut walls: Vec<f64> = r.iter().map(|x| x.0).collect();
        walls.sort_by(f64::total_cmp);
        let median = walls[walls.len() / 2];
        let rss = r.iter().map(|x| x.1).max().unwrap_or(0) as f64 / 1024.0;
        println!(
            "{stage:20} {median:9.3} {:>8.3}..{:<8.3} {rss:13.0}  {}",
            walls[0],
            walls[walls.len() - 1],
            r[0].2
        );
    }
    for pair in [(0, 1), (5, 6)] {
        let same = runs[pair.0][0].2 == runs[pair.1][0].2;
        println!(
            "{} and {}: {}",
            STAGES[pair.0],
            STAGES[pair.1],
            if same {
                "same result"
            } else {
                "DIFFERENT RESULTS"
            }
        );
    }
}

fn usage() -> ! {
    eprintln!("usage: bench-json --cpu CPU.json --window WINDOW.json [--repeat 5]");
    std::process::exit(2)
}

/// Peak resident set of this process, from /proc (0 where there is none).
fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// FNV-1a, to compare outputs without keeping both.
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn run_stage(stage: &str, cpu: &Path, window: &Path) -> (f64, String) {
    let file = || std::fs::File::open(window).expect("open window");
    let t = Instant::now();
    let check = match stage {
        "scan/own" => {
            let s = internals::scan(cpu, DEFAULT_MAX_EVENT_BYTES).expect("scan");
            summary(&s)
        }
        "scan/serde" => {
            let s = serde_scan::scan(std::fs::File::open(cpu).expect("open cpu")).expect("scan");
            summary(&s)
        }
        "window/own" => format!(
            "{} events",
            MergeWindow::read(window).expect("window").len()
        ),
        "window/serde" => {
            let reader = std::io::BufReader::with_capacity(1 << 20, file());
            let mut de = serde_json::Deserializer::from_reader(reader);
            let w = de
                .deserialize_map(serde_window::WindowVisitor)
                .expect("window");
            format!("{} events", w.events.len())
        }
        "window/serde-slice" => {
            let bytes = std::fs::read(window).expect("read window");
            let mut de = serde_json::Deserializer::from_slice(&bytes);
            let w = de
                .deserialize_map(serde_window::WindowVisitor)
                .expect("window");
            format!("{} events", w.events.len())
        }
        "write/own" => {
            let w = MergeWindow::read(window).expect("window");
            let mut out = Vec::new();
            let t = Instant::now();
            let n = internals::write_window_events(&w, BASE_NS, &mut out).expect("write");
            let wall = t.elapsed().as_secs_f64();
            return (
                wall,
                format!("{n} events, {} bytes, hash {:016x}", out.len(), hash(&out)),
            );
        }
        "write/serde" => {
            let reader = std::io::BufReader::with_capacity(1 << 20, file());
            let mut de = serde_json::Deserializer::from_reader(reader);
            let w = de
                .deserialize_map(serde_window::WindowVisitor)
                .expect("window");
            let mut out = Vec::new();
            let t = Instant::now();
            let n = serde_write::write_events(&w, BASE_NS, &mut out).expect("write");
            let wall = t.elapsed().as_secs_f64();
            return (
                wall,
                format!("{n} events, {} bytes, hash {:016x}", out.len(), hash(&out)),
            );
        }
        other => {
            eprintln!("unknown stage {other}");
            std::process::exit(2)
        }
    };
    (t.elapsed().as_secs_f64(), check)
}

fn summary(s: &internals::ScanSummary) -> String {
    let runs = |r: &[(u64, u64)]| hash(format!("{r:?}").as_bytes());
    format!(
        "kept {} dropped {} ops {} keys {:?} base {:?} runs {}+{} {:016x}/{:016x} ts {}..{}",
        s.kept,
        s.dropped,
        s.ops,
        s.top_level_keys,
        s.base_ns,
        s.head_runs.len(),
        s.tail_runs.len(),
        runs(&s.head_runs),
        runs(&s.tail_runs),
        s.min_ts,
        s.max_end_ts
    )
}
