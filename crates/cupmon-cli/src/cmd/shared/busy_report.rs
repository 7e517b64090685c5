//! "GPU busy", as `cupmon run`'s summary and `cupmon stats` print it: each device's
//! busy time ([`GPU_BUSY`]: the same union of kernel intervals that `report` and the
//! SQL view `busy_per_minute` count) and its share of the dump's time span.

use cupmon_records::{DumpStats, GPU_BUSY};

/// `GPU busy: device 0 12.345 ms (4.7% of the time span)`, then the definition;
/// nothing without a time span.
pub fn lines(stats: &DumpStats) -> Vec<String> {
    let Some(span) = stats.span_ns().filter(|&s| s > 0) else {
        return Vec::new();
    };
    let devices: Vec<String> = stats
        .collectives
        .devices
        .iter()
        .map(|d| {
            format!(
                "device {} {:.3} ms ({:.2}% of the time span)",
                d.device,
                d.busy_ns as f64 / 1e6,
                d.busy_ns as f64 * 100.0 / span as f64
            )
        })
        .collect();
    let busy = if devices.is_empty() {
        "no timed kernel".to_owned()
    } else {
        devices.join(", ")
    };
    vec![
        format!("GPU busy:        {busy}"),
        format!("  (GPU busy: {GPU_BUSY})"),
    ]
}
