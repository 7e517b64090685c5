//! `cupmon stats`: what a dump holds.

mod lines_report;
mod range_report;
mod slice_launches;
mod timeline_report;

use std::io::Write;

use anyhow::{Context, Result};
use cupmon_config::units::format_size;
use cupmon_records::digest::{summarize, summarize_on_grid};
use cupmon_records::dump::Retired;
use cupmon_records::{stats_of, DecodeProgress, Dump, DumpStats, TimelineBuilder, TimelineError};

use crate::cli::StatsArgs;
use crate::exit::BadInput;
use crate::local_time;
use crate::progress::Progress;

pub fn run(args: &StatsArgs) -> Result<i32> {
    super::check_dump_dir(&args.dump_dir)?;
    crate::verified_cache::remember_verified_segments();
    let dir = &args.dump_dir;
    let dump = Dump::open(dir).with_context(|| dir.display().to_string())?;
    let slice = args.slice.resolve(&dump)?;
    let range = slice.map(|s| s.range).unwrap_or_default();
    let grid = match args.timeline.timeline {
        Some(bin) => Some(
            TimelineBuilder::for_dump(&dump, &range, bin.duration()).map_err(|e| match e {
                TimelineError::Dump(e) => anyhow::Error::from(e).context(dir.display().to_string()),
                e => BadInput(format!("--timeline: {e}")).into(),
            })?,
        ),
        None => None,
    };
    let mut progress = Progress::dump("reading", dir);
    let on_progress = |p: &DecodeProgress| progress.update_of(p.bytes_read, p.total_bytes);
    let (summary, timeline) = match grid {
        Some(grid) => {
            summarize_on_grid(&dump, &range, grid, on_progress).map(|(s, t)| (s, Some(t.all)))
        }
        None => summarize(&dump, &range, on_progress).map(|s| (s, None)),
    }
    .with_context(|| dir.display().to_string())?;
    let slice_launches = summary.launches;
    let summary_kernel_records: u64 = summary.digest.kernels.iter().map(|k| k.launches).sum();
    let stats = stats_of(&dump, summary.report, &summary.digest, args.top);
    progress.finish();
    super::decode::print_report(&stats.report);
    if let Some(slice) = &slice {
        // As decode says it: a slice past the dump's end (or before its start) holds
        // nothing, and a table of zeros over a reversed span would not say why.
        if stats.report.records == 0 {
            let msg = slice.empty_message(&dump);
            return Err(BadInput(format!("{}: {msg}", dir.display())).into());
        }
    }
    let mut out = std::io::stdout().lock();
    let mut head = Vec::new();
    if let Some(slice) = &slice {
        head.push(slice.line(&dump, &stats.report));
        head.push(slice_launches::line(
            &slice_launches,
            summary_kernel_records,
        ));
    }
    if let Some(line) = retired_line(&stats.report.retired) {
        head.push(line);
    }
    let name_room = (!args.full_names).then(name_room);
    print_stats(&mut out, dir, &head, &stats, name_room)?;
    for line in super::shared::busy_report::lines(&stats) {
        writeln!(out, "{line}")?;
    }
    super::shared::collective_report::write(&mut out, &stats.collectives, &stats.meta)?;
    for line in super::shared::worker_report::lines(&stats.meta) {
        writeln!(out, "{line}")?;
    }
    let partial = stats.report.segments_digest_partial;
    if partial > 0 {
        // Why a `stats` of a long dump was slow: these segments' records were read.
        writeln!(
            out,
            "digests: {partial} segment(s) read record by record: the dump writer was behind \
             CUPTI while it wrote them and left their digests partial"
        )?;
    }
    if let Some(line) = super::shared::worker_report::slow_flush_line(&stats.meta) {
        writeln!(out, "{line}")?;
    }
    if stats.report.dropped_records.unwrap_or(0) > 0 {
        if let Some(hint) = super::shared::worker_report::drop_hint(&stats.meta) {
            writeln!(out, "{hint}")?;
        }
    }
    if let Some(t) = timeline {
        timeline_report::write(&mut out, &t)?;
    }
    if args.by_range {
        let mut progress = Progress::dump("linking GPU work to ranges in", dir);
        let times = cupmon_records::gpu_time_by_annotation(&dump, &range, |p| {
            progress.update_of(p.bytes_read, p.total_bytes)
        })
        .with_context(|| dir.display().to_string())?;
        progress.finish();
        range_report::write(&mut out, &times)?;
    }
    if args.by_line {
        lines_report::write(&mut out, &dump, &range, args.top, name_room)?;
    }
    Ok(0)
}

/// `retired: 3 segments, 1.2GiB, 14:00:00.000 - 14:20:00.000 local (...)`.
fn retired_line(r: &Retired) -> Option<String> {
    if r.segments == 0 {
        return None;
    }
    let span = match (r.first_ns, r.last_ns) {
        (Some(a), Some(b)) => format!(", {}", local_time::span(Some(a), Some(b))),
        _ => String::new(),
    };
    Some(format!(
        "retired: {} segments, {}{span} ({} records, {} kernels removed to keep the dump's \
         budget: older data is not in this dump)",
        r.segments,
        format_size(r.bytes),
        r.records,
        r.kernels
    ))
}

/// The terminal's width: `COLUMNS` (which shells set), else 120.
pub(crate) fn terminal_columns() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|&c| c > 0)
        .unwrap_or(120)
}

/// What a top-kernel line leaves for the name: the terminal's width less the
/// numbers' 35 columns, at least 40.
fn name_room() -> usize {
    terminal_columns().saturating_sub(35).max(40)
}

/// `name_room`: the most characters of a kernel's name (`None`: the full name).
fn print_stats(
    out: &mut impl Write,
    dir: &std::path::Path,
    head: &[String],
    s: &DumpStats,
    name_room: Option<usize>,
) -> std::io::Result<()> {
    let r = &s.report;
    writeln!(out, "dump:            {}", dir.display())?;
    for line in head {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "CUPTI:           {} ({} chunks, {:.1} MB of activity buffers)",
        r.cupti_version,
        r.chunks,
        r.buffer_bytes as f64 / 1e6
    )?;
    match (s.first_ns, s.span_ns()) {
        // In the forms --from and --to take, to paste into a slice of this span.
        (Some(first), Some(span)) => writeln!(
            out,
            "time span:       {:.3} s: --from {} --to {} (local time; Unix: {} to {})",
            span as f64 / 1e9,
            local_time::iso(first, false),
            local_time::iso(first + span, true),
            local_time::unix_s(first, false),
            local_time::unix_s(first + span, true),
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
    let account = cupmon_records::dump::KernelAccount::of(&s.meta);
    writeln!(out, "{}", account.line())?;
    if let Some(warning) = account.warning() {
        writeln!(out, "{warning}")?;
        eprintln!("cupmon: {warning}");
    }
    for line in
        account.detail_lines(|ns| format!("{} {}", local_time::date(ns), local_time::clock(ns)))
    {
        writeln!(out, "  {line}")?;
    }
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
             converted: counted apart (not among the records below, the time span or the \
             kernel times); decode and export keep them on a track of their own ({:?})",
            s.off_clock_records,
            cupmon_records::clock::OFF_CLOCK_TRACK
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
            let name = match name_room {
                Some(room) => {
                    let room = room.saturating_sub(note.chars().count()).max(30);
                    cupmon_demangle::short_name(&k.name, room)
                }
                None => std::borrow::Cow::Borrowed(k.name.as_str()),
            };
            writeln!(
                out,
                "  {:>10.3} {:>9} {:>10}  {name}{note}",
                k.total_ns as f64 / 1e6,
                k.launches,
                avg,
            )?;
        }
    }
    Ok(())
}
