//! The header: what ran where, on which GPUs and CUPTI, the time covered, the records,
//! dropped records (red when not zero or unknown: the data is incomplete) and retired
//! data (older segments removed to keep the dump's budget).

use std::io::{self, Write};

use super::text::{duration, esc, time};
use cupmon_records::dump::KernelAccount;

use crate::collect::ProcessData;
use crate::Report;

fn or_unknown(v: Option<String>) -> String {
    v.map_or_else(
        || "<span class=\"unknown\">unknown</span>".to_owned(),
        |s| esc(&s),
    )
}

fn gpus(p: &ProcessData) -> String {
    if p.info.gpus.is_empty() {
        let used: Vec<String> = p
            .timeline
            .devices
            .iter()
            .map(|d| format!("device {d}"))
            .collect();
        return if used.is_empty() {
            or_unknown(None)
        } else {
            format!("{} (no properties in the dump)", used.join(", "))
        };
    }
    let list: Vec<String> = p
        .info
        .gpus
        .iter()
        .map(|g| {
            let mut s = format!("{}: {}", g.id, esc(&g.name));
            if let Some(m) = g.memory_bytes {
                s.push_str(&format!(", {:.0} GiB", m as f64 / f64::from(1u32 << 30)));
            }
            if let Some(c) = &g.compute {
                s.push_str(&format!(", sm {c}"));
            }
            s
        })
        .collect();
    list.join("<br>")
}

/// The records kept apart on CUPTI's raw clock (`cupmon_records::clock::OFF_CLOCK_RULE`),
/// said beside the records when there are any.
fn off_clock(p: &ProcessData) -> String {
    match p.stats.off_clock_records {
        0 => String::new(),
        n => format!(
            " <span class=\"bad\" id=\"off-clock\">(+{n} on CUPTI's raw clock, not \
             convertible: counted apart)</span>"
        ),
    }
}

fn dropped(p: &ProcessData) -> (String, bool) {
    let r = &p.stats.report;
    match r.dropped_records {
        Some(0) => ("0".to_owned(), false),
        Some(n) => (n.to_string(), true),
        None => (
            format!(
                "unknown: {}",
                esc(r
                    .dropped_records_note
                    .as_deref()
                    .unwrap_or("not recorded in the meta"))
            ),
            true,
        ),
    }
}

/// The kernel account cell: `1000 launched, 70 unaccounted` (bad when any are), or
/// `not counted` with the reason; for a report on a period, then the kernels launched
/// in it.
fn kernels(p: &ProcessData) -> (String, bool) {
    let (text, bad) = session_kernels(p);
    let Some(l) = &p.slice_launches else {
        return (text, bad);
    };
    let in_period = match (l.all_counted(), l.segments_counted) {
        (Some(n), _) => format!("{n} launched"),
        (None, 0) => "launches not counted".to_owned(),
        (None, _) => format!(
            "at least {} launched ({} segments not counted)",
            l.kernels_launched, l.segments_not_counted
        ),
    };
    (format!("{text}; in this period: {in_period}"), bad)
}

/// For a report on a period: the kernels launched in it, all processes together.
fn period_launches(ps: &[ProcessData]) -> Option<String> {
    let launches: Vec<_> = ps.iter().filter_map(|p| p.slice_launches).collect();
    if launches.is_empty() {
        return None;
    }
    let launched: u64 = launches.iter().map(|l| l.kernels_launched).sum();
    let not_counted: u64 = launches.iter().map(|l| l.segments_not_counted).sum();
    Some(if launches.iter().all(|l| l.all_counted().is_some()) {
        launched.to_string()
    } else if launches.iter().all(|l| l.segments_counted == 0) {
        "not counted".to_owned()
    } else {
        format!("at least {launched} ({not_counted} segments not counted)")
    })
}

/// The session's account, from the meta.
fn session_kernels(p: &ProcessData) -> (String, bool) {
    match KernelAccount::of(&p.stats.meta) {
        KernelAccount::NotCounted { reason } => (esc(&reason), false),
        KernelAccount::Counted(c) => {
            let at_least = if c.lower_bound.is_some() {
                "at least "
            } else {
                ""
            };
            match c.unaccounted {
                Some(n) => (
                    format!(
                        "{at_least}{} launched, {at_least}{n} unaccounted",
                        c.launched
                    ),
                    n > 0,
                ),
                None => (
                    format!("{at_least}{} launched, unaccounted unknown", c.launched),
                    true,
                ),
            }
        }
    }
}

fn retired(p: &ProcessData) -> String {
    let r = &p.stats.report.retired;
    if r.segments == 0 {
        return "none".to_owned();
    }
    let span = match (r.first_ns, r.last_ns) {
        (Some(a), Some(b)) => format!(", {} &ndash; {}", time(a), time(b)),
        _ => String::new(),
    };
    format!(
        "<span class=\"warn\">{} segments, {} records ({} kernels){span}: older data is not \
         in this dump</span>",
        r.segments, r.records, r.kernels
    )
}

pub fn write(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let ps = &report.processes;
    let records: u64 = ps.iter().map(|p| p.stats.report.records).sum();
    let any_dropped = ps.iter().any(|p| dropped(p).1);
    let dropped_total = if ps.iter().any(|p| p.stats.report.dropped_records.is_none()) {
        "unknown".to_owned()
    } else {
        ps.iter()
            .filter_map(|p| p.stats.report.dropped_records)
            .sum::<u64>()
            .to_string()
    };
    let mut hosts: Vec<String> = ps.iter().filter_map(|p| p.info.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    let g = &report.grid;
    writeln!(out, "<header><h1>cupmon report</h1>")?;
    writeln!(out, "<dl class=\"summary\">")?;
    writeln!(
        out,
        "<dt>target</dt><dd><code>{}</code></dd>",
        esc(&report.target)
    )?;
    writeln!(
        out,
        "<dt>processes</dt><dd>{}{}</dd>",
        ps.len(),
        if hosts.is_empty() {
            String::new()
        } else {
            format!(" on {}", esc(&hosts.join(", ")))
        }
    )?;
    let what = if report.range.is_all() {
        "span"
    } else {
        "slice"
    };
    writeln!(
        out,
        "<dt>{what}</dt><dd>{} &ndash; {} ({})</dd>",
        time(g.from_ns),
        time(g.to_ns),
        duration(g.span_ns())
    )?;
    writeln!(out, "<dt>records</dt><dd id=\"records\">{records}</dd>")?;
    writeln!(
        out,
        "<dt>dropped records</dt><dd id=\"dropped\" class=\"{}\">{dropped_total}</dd>",
        if any_dropped { "bad" } else { "ok" }
    )?;
    let accounts: Vec<KernelAccount> = ps
        .iter()
        .map(|p| KernelAccount::of(&p.stats.meta))
        .collect();
    let unaccounted: u64 = accounts.iter().map(KernelAccount::unaccounted).sum();
    let not_counted = accounts
        .iter()
        .filter(|a| matches!(a, KernelAccount::NotCounted { .. }))
        .count();
    let unaccounted_text = match not_counted {
        0 => unaccounted.to_string(),
        n if n == ps.len() => "launches not counted".to_owned(),
        n => format!("{unaccounted} ({n} processes' launches not counted)"),
    };
    writeln!(
        out,
        "<dt>unaccounted kernels</dt><dd id=\"unaccounted\" class=\"{}\">{unaccounted_text}</dd>",
        if unaccounted > 0 { "bad" } else { "ok" }
    )?;
    if let Some(text) = period_launches(ps) {
        writeln!(
            out,
            "<dt>kernels launched in this period</dt><dd id=\"period-launches\">{text}</dd>"
        )?;
    }
    writeln!(out, "</dl>")?;
    for (p, account) in ps.iter().zip(&accounts) {
        if let Some(warning) = account.warning() {
            writeln!(
                out,
                "<p class=\"banner bad\" id=\"unaccounted-warning\">{}: {}</p>",
                esc(&p.label),
                esc(&warning)
            )?;
            for line in account.detail_lines(time) {
                writeln!(out, "<p class=\"banner bad\">{}</p>", esc(&line))?;
            }
        }
    }
    writeln!(
        out,
        "<table class=\"processes\"><thead><tr><th>process</th><th>command</th><th>host</th>\
         <th>GPUs</th><th>CUPTI</th><th>time span</th><th>records</th><th>dropped records</th>\
         <th>kernels</th><th>retired</th><th>dump</th></tr></thead><tbody>"
    )?;
    for p in ps {
        let (drop_text, bad) = dropped(p);
        let (kernel_text, kernels_bad) = kernels(p);
        let span = match (p.stats.first_ns, p.stats.last_ns, p.stats.span_ns()) {
            (Some(a), Some(_), Some(s)) => format!("{} ({})", time(a), duration(s)),
            _ => "no timed records".to_owned(),
        };
        writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{span}</td>\
             <td class=\"num\">{}{}</td><td class=\"num {}\">{drop_text}</td><td class=\"{}\">{kernel_text}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(&p.label),
            or_unknown(p.info.command.clone()),
            or_unknown(p.info.host.clone()),
            gpus(p),
            esc(&p.stats.report.cupti_version.to_string()),
            p.stats.report.records,
            off_clock(p),
            if bad { "bad" } else { "ok" },
            if kernels_bad { "bad" } else { "ok" },
            retired(p),
            esc(&p.dir.display().to_string()),
        )?;
    }
    writeln!(out, "</tbody></table></header>")
}
