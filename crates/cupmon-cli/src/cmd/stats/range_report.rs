//! `cupmon stats --by-range`: GPU time by NVTX range or `cupmon.annotate` name.

use std::io::Write;

use cupmon_records::{RangeTime, RangeTimes};

const OUTSIDE: &str = "(outside any range)";

/// The table, the largest total first, then the GPU work no range reaches.
pub(crate) fn write(out: &mut impl Write, times: &RangeTimes) -> std::io::Result<()> {
    writeln!(
        out,
        "GPU time by range (NVTX ranges and cupmon.annotate; each op under the innermost range \
         its launch ran in; launches are linked to ranges only while a trace window was open):"
    )?;
    if times.ranges.is_empty() {
        writeln!(
            out,
            "  no GPU work linked to a range (no range was open during a trace window, or \
             the dump has no window)"
        )?;
        return Ok(());
    }
    let width = times
        .ranges
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(OUTSIDE.len(), 60);
    writeln!(
        out,
        "  {:<width$}  {:>9}  {:>8}  {:>14}  {:>14}  {:>14}",
        "range", "instances", "kernels", "kernel ms", "copies+memsets", "their ms"
    )?;
    for r in &times.ranges {
        row(out, &r.name, Some(r.instances), r, width)?;
    }
    row(out, OUTSIDE, None, &times.outside, width)
}

fn row(
    out: &mut impl Write,
    name: &str,
    instances: Option<u64>,
    r: &RangeTime,
    width: usize,
) -> std::io::Result<()> {
    let name: String = name.chars().take(width).collect();
    writeln!(
        out,
        "  {name:<width$}  {:>9}  {:>8}  {:>14.3}  {:>14}  {:>14.3}",
        instances.map_or_else(String::new, |n| n.to_string()),
        r.kernels,
        r.kernel_ns as f64 / 1e6,
        r.transfers,
        r.transfer_ns as f64 / 1e6
    )
}
