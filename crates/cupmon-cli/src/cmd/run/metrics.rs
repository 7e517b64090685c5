//! `cupmon run --metrics-port/--metrics-file`: per-rank live signals in Prometheus'
//! text exposition format, computed by `cupmon run` (outside the traced program)
//! every `--metrics-interval` from each rank's control channel (kernels/s, dropped
//! and unaccounted records) and the last minute of its dump (GPU busy, NCCL share,
//! the last GPU progress, the straggler score: cupmon-straggler's `recent`).
//!
//! The port serves the latest text at `/metrics`; the textfile (for node-exporter's
//! textfile collector) is replaced atomically each time (a hidden temporary file
//! renamed onto it, so the collector never reads half of one) and removed when the
//! run ends, so that a finished job exports nothing.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use cupmon_config::MonitorConfig;
use cupmon_control::{find_processes, ProcessStatus};
use cupmon_records::Dump;
use cupmon_straggler::{recent, THRESHOLD};
use cupmon_trace::AtomicOutput;

use super::RunId;
use crate::cmd::status::{ask, Asked};
use crate::exit::BadInput;

/// The window busy %, NCCL share and the straggler score are computed over.
const WINDOW_NS: u64 = 60_000_000_000;
/// How long a rank's control channel may take to answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// One rank's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankSample {
    pub rank: Option<i64>,
    pub pid: Option<i64>,
    /// Seconds since the end of its newest GPU record (as its dump has it).
    pub progress_age_s: Option<f64>,
    pub busy_ratio: f64,
    pub kernels_per_s: f64,
    pub nccl_share: f64,
    pub dropped_records: Option<u64>,
    pub unaccounted_kernels: Option<u64>,
    pub straggler_score: Option<f64>,
    pub straggler: bool,
}

/// The metrics' names, types and help, in the order they are written.
const METRICS: [(&str, &str, &str); 8] = [
    ("cupmon_gpu_progress_age_seconds", "gauge", "Seconds since the rank's newest GPU operation ended, as its dump has it (about one flush period behind)."),
    ("cupmon_gpu_busy_ratio", "gauge", "Share of the last minute at least one kernel ran, averaged over the rank's devices."),
    ("cupmon_kernels_per_second", "gauge", "Kernels recorded per second, recently."),
    ("cupmon_nccl_share_ratio", "gauge", "NCCL kernels' time over busy time in the last minute."),
    ("cupmon_dropped_records_total", "counter", "Records lost: CUPTI's count plus records lost to an empty buffer pool."),
    ("cupmon_unaccounted_kernels", "gauge", "Kernels launched that were neither recorded nor counted as dropped."),
    ("cupmon_straggler_score", "gauge", "The rank's compute GPU time per unit of work over the other ranks' median, less 1, in the last minute."),
    ("cupmon_straggler", "gauge", "1 when the rank is the last minute's straggler (score at or above the threshold), else 0."),
];

/// The samples as Prometheus' text exposition format (version 0.0.4).
pub fn exposition(samples: &[RankSample]) -> String {
    let mut out = String::new();
    for (i, (name, kind, help)) in METRICS.iter().enumerate() {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for s in samples {
            let value = match i {
                0 => s.progress_age_s,
                1 => Some(s.busy_ratio),
                2 => Some(s.kernels_per_s),
                3 => Some(s.nccl_share),
                4 => s.dropped_records.map(|n| n as f64),
                5 => s.unaccounted_kernels.map(|n| n as f64),
                6 => s.straggler_score,
                _ => Some(if s.straggler { 1.0 } else { 0.0 }),
            };
            let Some(value) = value else { continue };
            let label = |v: Option<i64>| v.map_or_else(String::new, |v| v.to_string());
            let _ = writeln!(
                out,
                "{name}{{rank=\"{}\",pid=\"{}\"}} {value}",
                label(s.rank),
                label(s.pid)
            );
        }
    }
    out
}

/// The metrics' thread (and server), until [`Metrics::stop`].
pub struct Metrics {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    file: Option<PathBuf>,
}

/// Start what `config` asks for (nothing without a port or a file). A port that
/// cannot be listened on is bad input, before the program starts.
pub fn start(
    config: &MonitorConfig,
    output: &Path,
    run: &RunId,
    before: &BTreeSet<PathBuf>,
) -> Result<Option<Metrics>> {
    if config.metrics_port.is_none() && config.metrics_file.is_none() {
        return Ok(None);
    }
    let latest = Arc::new(Mutex::new(exposition(&[])));
    if let Some(addr) = config.metrics_port {
        let listener = TcpListener::bind(addr).map_err(|e| {
            BadInput(format!(
                "not starting the program: CUPMON_METRICS_PORT (--metrics-port) = {addr}: \
                 cannot listen: {e}"
            ))
        })?;
        let latest = Arc::clone(&latest);
        std::thread::Builder::new()
            .name("cupmon-metrics-http".into())
            .spawn(move || serve(&listener, &latest))?;
    }
    if let Some(file) = &config.metrics_file {
        write_file(file, &exposition(&[])).map_err(|e| {
            BadInput(format!(
                "not starting the program: CUPMON_METRICS_FILE (--metrics-file) = {}: {e}",
                file.display()
            ))
        })?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (stop, output, run, before) = (
            Arc::clone(&stop),
            output.to_path_buf(),
            run.clone(),
            before.clone(),
        );
        let (file, interval) = (config.metrics_file.clone(), config.metrics_interval);
        std::thread::Builder::new()
            .name("cupmon-metrics".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let text = exposition(&sample(&output, &run, &before));
                    if let Some(file) = &file {
                        if let Err(e) = write_file(file, &text) {
                            eprintln!("cupmon: warning: {}: {e}", file.display());
                        }
                    }
                    *latest.lock().unwrap_or_else(|p| p.into_inner()) = text;
                    let since = Instant::now();
                    while since.elapsed() < interval && !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            })?
    };
    Ok(Some(Metrics {
        stop,
        thread: Some(thread),
        file: config.metrics_file.clone(),
    }))
}

impl Metrics {
    /// Stop sampling and remove the textfile (a finished job exports nothing).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(file) = &self.file {
            if let Err(e) = std::fs::remove_file(file) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    eprintln!("cupmon: warning: {}: cannot remove: {e}", file.display());
                }
            }
        }
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    let out = AtomicOutput::create(path)?;
    let mut w = out.writer()?;
    w.write_all(text.as_bytes())?;
    out.commit(w)?;
    Ok(())
}

/// This run's ranks now.
fn sample(output: &Path, run: &RunId, before: &BTreeSet<PathBuf>) -> Vec<RankSample> {
    let dirs: Vec<PathBuf> = crate::cmd::dumps_in(output)
        .into_iter()
        .filter(|d| !before.contains(d) && run.owns(d))
        .collect();
    let statuses: HashMap<PathBuf, ProcessStatus> = find_processes(&output.to_string_lossy())
        .unwrap_or_default()
        .iter()
        .filter(|f| dirs.contains(&f.dump_dir))
        .filter_map(|f| match ask(f, ASK_TIMEOUT) {
            Asked::Status(s) => Some((f.dump_dir.clone(), *s)),
            _ => None,
        })
        .collect();
    let dumps: Vec<Dump> = dirs.iter().filter_map(|d| Dump::open(d).ok()).collect();
    let Ok(r) = recent(&dumps, WINDOW_NS, THRESHOLD) else {
        return Vec::new();
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let window_s = (r.to_ns.saturating_sub(r.from_ns)).max(1) as f64 / 1e9;
    let named = r.comparison.straggler.as_ref().map(|s| s.rank);
    r.ranks
        .iter()
        .zip(&dumps)
        .enumerate()
        .map(|(i, (k, dump))| {
            let status = statuses.get(&k.dir);
            RankSample {
                rank: k.rank,
                pid: dump.meta().json().get("pid").and_then(|p| p.as_i64()),
                progress_age_s: k.last_ns.map(|t| now.saturating_sub(t) as f64 / 1e9),
                busy_ratio: k.busy_fraction,
                kernels_per_s: status.map_or(k.kernels as f64 / window_s, |s| s.kernels_per_s),
                nccl_share: k.nccl_share,
                dropped_records: status.map(|s| s.dropped_records),
                unaccounted_kernels: status.and_then(|s| s.kernels_unaccounted),
                straggler_score: k.score,
                straggler: named == Some(i),
            }
        })
        .collect()
}

/// Answer every connection with the latest text (`/metrics`, or `/`).
fn serve(listener: &TcpListener, latest: &Mutex<String>) {
    for stream in listener.incoming().flatten() {
        let text = latest.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let _ = answer(stream, &text);
    }
}

fn answer(mut stream: TcpStream, text: &str) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut request = String::new();
    BufReader::new(&stream).read_line(&mut request)?;
    let path = request.split_whitespace().nth(1).unwrap_or("");
    let (status, body) = if path == "/metrics" || path == "/" {
        ("200 OK", text)
    } else {
        ("404 Not Found", "not found: the metrics are at /metrics\n")
    };
    write!(
        stream,
        "HTTP/1.0 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_help_and_type_and_unknown_values_are_left_out() {
        let text = exposition(&[
            RankSample {
                rank: Some(1),
                pid: Some(42),
                progress_age_s: Some(0.5),
                straggler_score: Some(0.05),
                straggler: true,
                dropped_records: Some(3),
                ..RankSample::default()
            },
            RankSample {
                pid: Some(43),
                ..RankSample::default()
            },
        ]);
        for (name, kind, _) in METRICS {
            assert!(text.contains(&format!("# TYPE {name} {kind}\n")), "{text}");
        }
        assert!(
            text.contains("cupmon_straggler{rank=\"1\",pid=\"42\"} 1\n"),
            "{text}"
        );
        assert!(text.contains("cupmon_straggler_score{rank=\"1\",pid=\"42\"} 0.05\n"));
        assert!(text.contains("cupmon_dropped_records_total{rank=\"1\",pid=\"42\"} 3\n"));
        // Not known for the second process (no rank, no answer): no sample at all.
        assert!(
            !text.contains("cupmon_dropped_records_total{rank=\"\""),
            "{text}"
        );
        assert!(
            text.contains("cupmon_straggler{rank=\"\",pid=\"43\"} 0\n"),
            "{text}"
        );
    }
}
