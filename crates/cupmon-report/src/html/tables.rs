//! The tables: trace windows, top kernels, copies, per-stream busy time, warnings.
//! Numbers are printed as `cupmon stats` prints them (ms with 3 decimals, µs with 2).

use std::io::{self, Write};
use std::path::Path;

use super::text::{bytes, esc, href, ms, percent, time, us};
use crate::copies::copy_kind_name;
use crate::durations::QUANTILE_ERROR;
use crate::Report;

/// The most characters of a kernel's name the kernel table shows (shortened by
/// `cupmon_demangle::short_name`, as `cupmon stats` does); the cell's tooltip holds the
/// whole name. One templated kernel's name filled 50 lines of the page.
pub const KERNEL_NAME_CHARS: usize = 100;

/// Streams listed at most (the busiest).
const STREAMS: usize = 40;
/// Warnings listed at most per process.
const WARNINGS: usize = 20;

pub fn windows(out: &mut impl Write, r: &Report, page_dir: &Path) -> io::Result<()> {
    let rows: Vec<String> = r
        .processes
        .iter()
        .flat_map(|p| {
            p.windows.iter().map(move |w| {
                let span = w.span.map_or_else(
                    || "no events".to_owned(),
                    |(a, b)| format!("{} &ndash; {}", time(a), time(b)),
                );
                let name = w
                    .file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                format!(
                    "<tr><td>{}</td><td>{}</td><td>{span}</td><td class=\"num\">{}</td>\
                     <td><a class=\"window-link\" href=\"{}\">{}</a></td></tr>",
                    esc(&p.label),
                    w.number,
                    w.events,
                    esc(&href(page_dir, &w.file)),
                    esc(&name)
                )
            })
        })
        .collect();
    if rows.is_empty() {
        return writeln!(
            out,
            "<section id=\"windows\"><h2>Trace windows</h2><p class=\"note\">No trace windows \
             in the dumps (<code>cupmon window</code> takes one from a running job).</p></section>"
        );
    }
    writeln!(
        out,
        "<section id=\"windows\"><h2>Trace windows</h2><p class=\"note\">Marked on the charts; \
         open a trace in https://ui.perfetto.dev.</p><table><thead><tr><th>process</th>\
         <th>window</th><th>time</th><th>events</th><th>trace</th></tr></thead><tbody>"
    )?;
    for row in rows {
        writeln!(out, "{row}")?;
    }
    writeln!(out, "</tbody></table></section>")
}

pub fn kernels(out: &mut impl Write, r: &Report) -> io::Result<()> {
    writeln!(
        out,
        "<section><h2>Top kernels by total GPU time</h2><p class=\"note\">{} distinct kernels, \
         {} ms of kernel time in all{}. Mean over launches with both timestamps; p50/p99 \
         within {:.1}%; share of all kernel time.</p>",
        r.distinct_kernels,
        ms(r.kernel_ns),
        if r.processes.len() > 1 {
            ", all processes together"
        } else {
            ""
        },
        QUANTILE_ERROR * 100.0
    )?;
    writeln!(
        out,
        "<table id=\"kernels\"><thead><tr><th>#</th><th>kernel</th><th>launches</th>\
         <th>total ms</th><th>mean us</th><th>p50 us</th><th>p99 us</th><th>share</th></tr>\
         </thead><tbody>"
    )?;
    for (i, k) in r.kernels.iter().enumerate() {
        let untimed = k.launches - k.timed;
        let note = if untimed > 0 {
            format!(" <span class=\"note\">({untimed} launches without times)</span>")
        } else {
            String::new()
        };
        writeln!(
            out,
            "<tr><td class=\"num\">{}</td><td class=\"name\" title=\"{}\">{}{note}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">\
             <span class=\"bar\" style=\"width:{:.0}px\"></span>{}</td></tr>",
            i + 1,
            esc(&k.name),
            esc(&cupmon_demangle::short_name(&k.name, KERNEL_NAME_CHARS)),
            k.launches,
            ms(k.total_ns),
            us(k.mean_ns()),
            us(k.p50_ns),
            us(k.p99_ns),
            k.share * 60.0,
            percent(Some(k.share)),
        )?;
    }
    writeln!(out, "</tbody></table></section>")
}

/// GPU time by NVTX range or annotation name, when the windows linked any.
pub fn ranges(out: &mut impl Write, r: &Report) -> io::Result<()> {
    if r.ranges.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "<section><h2>GPU time by range</h2><p class=\"note\">NVTX ranges and \
         cupmon.annotate names, in the trace windows (where CUPTI links launches to them); \
         each kernel, copy or memset under the innermost range its launch ran in.</p>"
    )?;
    writeln!(
        out,
        "<table id=\"ranges\"><thead><tr><th>range</th><th>instances</th><th>kernels</th>\
         <th>kernel ms</th><th>copies+memsets</th><th>their ms</th></tr></thead><tbody>"
    )?;
    for g in &r.ranges {
        writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}\
             </td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}\
             </td></tr>",
            esc(&g.name),
            g.instances,
            g.kernels,
            ms(g.kernel_ns),
            g.transfers,
            ms(g.transfer_ns),
        )?;
    }
    writeln!(out, "</tbody></table></section>")
}

pub fn copies(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let c = &r.copies;
    writeln!(
        out,
        "<section><h2>Copies by bytes</h2><p class=\"note\">{} in {} copies.</p>",
        bytes(c.bytes() as f64),
        c.groups.iter().map(|g| g.count).sum::<u64>()
    )?;
    if c.groups.is_empty() {
        return writeln!(out, "</section>");
    }
    writeln!(
        out,
        "<table id=\"copies\"><thead><tr><th>copy</th><th>count</th><th>bytes</th>\
         <th>total ms</th><th>bandwidth</th></tr></thead><tbody>"
    )?;
    for g in &c.groups {
        writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\" title=\"{} B\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&g.label()),
            g.count,
            g.bytes,
            bytes(g.bytes as f64),
            ms(g.timed_ns),
            g.bandwidth()
                .map_or_else(|| "-".to_owned(), |b| format!("{}/s", bytes(b)))
        )?;
    }
    writeln!(out, "</tbody></table><h3>Largest copies</h3>")?;
    writeln!(
        out,
        "<table id=\"largest-copies\"><thead><tr><th>bytes</th><th>copy</th><th>process</th>\
         <th>device</th><th>stream</th><th>start</th><th>ms</th></tr></thead><tbody>"
    )?;
    for one in &c.largest {
        let when = if one.start == 0 {
            "-".to_owned()
        } else {
            time(one.start)
        };
        writeln!(
            out,
            "<tr><td class=\"num\" title=\"{} B\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td>{when}</td><td class=\"num\">{}</td></tr>",
            one.bytes,
            bytes(one.bytes as f64),
            copy_kind_name(one.copy_kind),
            esc(&r.processes[one.process].label),
            one.device,
            one.stream,
            if one.start != 0 && one.end > one.start {
                ms(one.end - one.start)
            } else {
                "-".to_owned()
            }
        )?;
    }
    writeln!(out, "</tbody></table></section>")
}

pub fn streams(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let mut rows: Vec<(usize, &crate::streams::StreamBusy)> = r
        .processes
        .iter()
        .enumerate()
        .flat_map(|(i, p)| p.streams.iter().map(move |s| (i, s)))
        .collect();
    rows.sort_by_key(|(i, s)| (std::cmp::Reverse(s.busy_ns), *i, s.device, s.stream));
    let total = rows.len();
    rows.truncate(STREAMS);
    writeln!(
        out,
        "<section><h2>Streams</h2><p class=\"note\">Busy: the union of the stream's kernel \
         intervals; share of its device's busy time (streams running at once add up to more \
         than 100%) and of the process's time span.{}</p>",
        if total > STREAMS {
            format!(" The {STREAMS} busiest of {total}.")
        } else {
            String::new()
        }
    )?;
    writeln!(
        out,
        "<table id=\"streams\"><thead><tr><th>process</th><th>device</th><th>stream</th>\
         <th>kernels</th><th>busy ms</th><th>of device busy</th><th>of span</th></tr></thead><tbody>"
    )?;
    for (i, s) in rows {
        let p = &r.processes[i];
        let device_busy = p
            .stats
            .collectives
            .devices
            .iter()
            .find(|d| d.device == s.device)
            .map(|d| d.busy_ns)
            .filter(|&b| b > 0);
        let span = p.stats.span_ns().filter(|&s| s > 0);
        writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&p.label),
            s.device,
            s.stream,
            s.kernels,
            ms(s.busy_ns),
            percent(device_busy.map(|b| s.busy_ns as f64 / b as f64)),
            percent(span.map(|t| s.busy_ns as f64 / t as f64)),
        )?;
    }
    writeln!(out, "</tbody></table></section>")
}

pub fn warnings(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let mut lines = Vec::new();
    for p in &r.processes {
        let w = &p.stats.report.warnings;
        for warning in w.iter().take(WARNINGS) {
            lines.push(format!("{}: {}", p.label, warning));
        }
        if w.len() > WARNINGS {
            lines.push(format!("{}: and {} more", p.label, w.len() - WARNINGS));
        }
        for e in &p.window_errors {
            lines.push(format!("{}: a window could not be read: {e}", p.label));
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    writeln!(out, "<section id=\"warnings\"><h2>Warnings</h2><ul>")?;
    for l in lines {
        writeln!(out, "<li>{}</li>", esc(&l))?;
    }
    writeln!(out, "</ul></section>")
}
