//! `cupmon stats`: what a dump holds.

use std::io::Write;

use anyhow::{Context, Result};
use cupmon_records::{dump_stats, DumpStats};

use crate::cli::StatsArgs;
use crate::progress::Progress;

pub fn run(args: &StatsArgs) -> Result<i32> {
    super::check_dump_dir(&args.dump_dir)?;
    let mut progress = Progress::dump("reading", &args.dump_dir);
    let stats = dump_stats(&args.dump_dir, args.top, |p| {
        progress.update_of(p.bytes_read, p.total_bytes)
    })
    .with_context(|| args.dump_dir.display().to_string())?;
    progress.finish();
    super::decode::print_report(&stats.report);
    let mut out = std::io::stdout().lock();
    print_stats(&mut out, &args.dump_dir, &stats)?;
    super::collective_report::write(&mut out, &stats.collectives, &stats.meta)?;
    for line in super::worker_report::lines(&stats.meta) {
        writeln!(out, "{line}")?;
    }
    if stats.report.dropped_records.unwrap_or(0) > 0 {
        if let Some(hint) = super::worker_report::drop_hint(&stats.meta) {
            writeln!(out, "{hint}")?;
        }
    }
    Ok(0)
}

fn print_stats(out: &mut impl Write, dir: &std::path::Path, s: &DumpStats) -> std::io::Result<()> {
    let r = &s.report;
    writeln!(out, "dump:            {}", dir.display())?;
    writeln!(
        out,
        "CUPTI:           {} ({} chunks, {:.1} MB of activity buffers)",
        r.cupti_version,
        r.chunks,
        r.buffer_bytes as f64 / 1e6
    )?;
    match (s.first_ns, s.span_ns()) {
        (Some(first), Some(span)) => writeln!(
            out,
            "time span:       {:.3} s from {} (Unix ns)",
            span as f64 / 1e9,
            first
        )?,
        _ => writeln!(out, "time span:       no timed records")?,
    }
    writeln!(
        out,
        "dropped records: {}",
        r.dropped_records.map_or_else(
            || format!(
                "unknown: {}",
                r.dropped_records_note
                    .as_deref()
                    .unwrap_or("not recorded in the meta")
            ),
            |d| d.to_string()
        )
    )?;
    writeln!(out, "records:         {}", r.records)?;
    if r.clock_converted > 0 {
        writeln!(
            out,
            "other clock:     {} records were stamped by another CUPTI client's clock ({:.3} \
             ticks/ns) and converted to Unix ns",
            r.clock_converted,
            r.foreign_ticks_per_ns.unwrap_or(0.0)
        )?;
    }
    if s.off_clock_records > 0 {
        writeln!(
            out,
            "other clock:     {} records are on another CUPTI client's clock and could not be \
             converted: left out of the time span and the kernel times",
            s.off_clock_records
        )?;
    }
    for (kind, n) in &r.records_by_kind {
        writeln!(out, "  {:<22} {n:>12}", kind.cupti_name())?;
    }
    writeln!(out, "memcpy bytes:    {}", s.memcpy_bytes)?;
    writeln!(out, "distinct kernels: {}", s.distinct_kernels)?;
    if !s.top_kernels.is_empty() {
        writeln!(out, "top kernels by total GPU time:")?;
        writeln!(
            out,
            "  {:>10} {:>9} {:>10}  name",
            "total ms", "launches", "avg us"
        )?;
        for k in &s.top_kernels {
            // The average is over timed launches only (an unfinished kernel has no time).
            let avg = k
                .mean_ns()
                .map_or_else(|| "-".to_owned(), |ns| format!("{:.2}", ns / 1e3));
            let untimed = k.launches - k.timed;
            let note = if untimed > 0 {
                format!(" ({untimed} launches without times)")
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {:>10.3} {:>9} {:>10}  {}{note}",
                k.total_ns as f64 / 1e6,
                k.launches,
                avg,
                k.name
            )?;
        }
    }
    Ok(())
}
