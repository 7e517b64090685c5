//! The charts' data, embedded in the page as JSON: per bin, each device's busy %, each
//! process's kernels/s, copy bytes/s and time in NCCL kernels, from the same
//! [`cupmon_records::TimelineBin`] methods that `cupmon stats --timeline` prints;
//! the windows, the slowest period and the slowest rank of each period. Times are ms
//! after `t0_ms` (JavaScript's numbers hold Unix ns only to about 250 ns).

use std::path::Path;

use serde_json::{json, Value};

use super::text::href;
use crate::collect::ProcessData;
use crate::Report;

/// Round to `decimals` places, so the page carries `12.3`, not `12.300000000000001`.
fn round(v: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (v * f).round() / f
}

fn series(name: String, process: usize, values: Vec<f64>) -> Value {
    json!({"name": name, "p": process, "v": values})
}

fn ms_after(t0_ns: u64, t_ns: u64) -> f64 {
    round((t_ns as f64 - t0_ns as f64) / 1e6, 3)
}

/// The JSON, with `<` escaped so that it cannot close its `<script>` element.
pub fn chart_json(report: &Report, page_dir: &Path) -> String {
    let g = &report.grid;
    let ps = &report.processes;
    let mut busy = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        for (d, dev) in p.timeline.devices.iter().enumerate() {
            let v = p
                .timeline
                .bins
                .iter()
                .map(|b| round(b.device_busy_fraction(d) * 100.0, 2))
                .collect();
            let name = if ps.len() > 1 {
                format!("{} GPU {dev}", p.label)
            } else {
                format!("GPU {dev}")
            };
            busy.push(series(name, i, v));
        }
    }
    let per_process = |f: &dyn Fn(&ProcessData) -> Vec<f64>| -> Vec<Value> {
        ps.iter()
            .enumerate()
            .map(|(i, p)| series(p.label.clone(), i, f(p)))
            .collect()
    };
    let kernels = per_process(&|p| {
        p.timeline
            .bins
            .iter()
            .map(|b| round(b.kernels_per_s(), 1))
            .collect()
    });
    let copies = per_process(&|p| {
        p.timeline
            .bins
            .iter()
            .map(|b| b.copy_bytes_per_s().round())
            .collect()
    });
    // NCCL time over the bin, averaged over the process's devices with kernels.
    let nccl: Vec<Value> = ps
        .iter()
        .enumerate()
        .filter(|(_, p)| p.stats.collectives.nccl_kernels() > 0)
        .map(|(i, p)| {
            let devices = p.timeline.devices.len().max(1) as f64;
            let v = p
                .nccl
                .bins
                .iter()
                .map(|b| {
                    let ns: u64 = b.busy_ns.iter().sum();
                    round(ns as f64 / (b.len_ns.max(1) as f64 * devices) * 100.0, 2)
                })
                .collect();
            series(p.label.clone(), i, v)
        })
        .collect();
    let mut windows = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        for w in &p.windows {
            let Some((a, b)) = w.span else { continue };
            windows.push(json!({
                "name": format!("{} window {}", p.label, w.number),
                "p": i,
                "a": ms_after(g.from_ns, a),
                "b": ms_after(g.from_ns, b),
                "href": href(page_dir, &w.file),
            }));
        }
    }
    let per = &report.periods;
    let slowest = per.slowest_period.map(|i| {
        let p = &per.periods[i];
        json!({"a": ms_after(g.from_ns, p.start_ns), "b": ms_after(g.from_ns, p.start_ns + p.len_ns)})
    });
    let slowest_rank: Vec<i64> = per
        .periods
        .iter()
        .map(|p| p.slowest.map_or(-1, |s| s as i64))
        .collect();
    let data = json!({
        "t0_ms": g.from_ns / 1_000_000,
        "t0_frac_ms": round((g.from_ns % 1_000_000) as f64 / 1e6, 6),
        "bin_ms": g.bin_ns as f64 / 1e6,
        "span_ms": g.span_ns() as f64 / 1e6,
        "bins": g.bins(),
        "processes": ps.iter().map(|p| p.label.clone()).collect::<Vec<_>>(),
        "busy": busy,
        "kernels": kernels,
        "copies": copies,
        "nccl": nccl,
        "windows": windows,
        "slowest": slowest,
        "period_ms": per.period_ns as f64 / 1e6,
        "slowest_rank": if per.stragglers { json!(slowest_rank) } else { Value::Null },
    });
    data.to_string().replace('<', "\\u003c")
}
