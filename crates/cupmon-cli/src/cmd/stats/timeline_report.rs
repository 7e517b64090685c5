//! `cupmon stats --timeline`: the bins of a [`Timeline`] as a table and two terminal
//! sparklines (busy % and kernels/s), so that a user sees where a job slowed down
//! before slicing it.

use std::io::{self, Write};
use std::time::Duration;

use cupmon_config::units::format_duration;
use cupmon_records::Timeline;

use crate::local_time;

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One character per value, scaled to `max` (▁ for 0, █ for `max`).
pub fn sparkline(values: &[f64], max: f64) -> String {
    values
        .iter()
        .map(|&v| {
            let level = if max > 0.0 {
                (v / max * 7.0).round().clamp(0.0, 7.0) as usize
            } else {
                0
            };
            SPARKS[level]
        })
        .collect()
}

pub fn write(out: &mut impl Write, t: &Timeline) -> io::Result<()> {
    if t.bins.is_empty() {
        return writeln!(out, "timeline:        no timed records");
    }
    let several = t.devices.len() > 1;
    let busy_what = match t.devices.len() {
        0 => "no kernels".to_owned(),
        1 => format!("device {}", t.devices[0]),
        n => format!("mean over {n} devices, then each"),
    };
    writeln!(
        out,
        "timeline:        {} bins of {} from {} (busy %: union of kernel time, {busy_what}; \
         kernels counted where they start)",
        t.bins.len(),
        format_duration(Duration::from_nanos(t.bin_ns)),
        local_time::span(Some(t.from_ns), Some(t.to_ns)),
    )?;
    let mut head = format!("  {:<12} {:>7}", "start", "busy %");
    if several {
        for d in &t.devices {
            head.push_str(&format!(" {:>7}", format!("dev{d} %")));
        }
    }
    head.push_str(&format!(" {:>12} {:>12}", "kernels/s", "copy MiB/s"));
    writeln!(out, "{head}")?;
    for b in &t.bins {
        let mut row = format!(
            "  {:<12} {:>7.1}",
            local_time::clock(b.start_ns),
            b.busy_fraction() * 100.0
        );
        if several {
            for i in 0..t.devices.len() {
                row.push_str(&format!(" {:>7.1}", b.device_busy_fraction(i) * 100.0));
            }
        }
        row.push_str(&format!(
            " {:>12.1} {:>12.1}",
            b.kernels_per_s(),
            b.copy_bytes_per_s() / f64::from(1u32 << 20)
        ));
        writeln!(out, "{row}")?;
    }
    let busy: Vec<f64> = t.bins.iter().map(|b| b.busy_fraction()).collect();
    let rate: Vec<f64> = t.bins.iter().map(|b| b.kernels_per_s()).collect();
    let max_rate = rate.iter().copied().fold(0.0, f64::max);
    writeln!(out, "  busy %     {}  (0-100 %)", sparkline(&busy, 1.0))?;
    writeln!(
        out,
        "  kernels/s  {}  (0-{max_rate:.1} /s)",
        sparkline(&rate, max_rate)
    )?;
    if t.busy_over_ns > 0 {
        writeln!(
            out,
            "  note: {:.3} ms of busy time may be counted twice (kernels far out of time order)",
            t.busy_over_ns as f64 / 1e6
        )?;
    }
    let dropped = t
        .dropped_records
        .map_or_else(|| "unknown".to_owned(), |d| d.to_string());
    writeln!(
        out,
        "  dropped records: {dropped} in all (the dump counts them in total, not per bin)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparks_scale_to_the_maximum() {
        assert_eq!(sparkline(&[0.0, 0.5, 1.0], 1.0), "▁▅█");
        assert_eq!(sparkline(&[0.0, 0.0], 0.0), "▁▁");
        assert_eq!(sparkline(&[2.0], 1.0), "█");
    }
}
