//! The hint (the slowest period and the command that decodes it) and the ranks side
//! by side: busy time, time in NCCL kernels (as `cupmon stats`' collectives section
//! gives them), how often each was the slowest rank, and the periods where the others
//! waited longest for it.

use std::io::{self, Write};
use std::time::Duration;

use cupmon_config::units::format_duration;

use super::text::{esc, iso_utc, ms, percent, shell_word, time};
use crate::Report;

/// `minute`, or `period of 200ms`.
fn period_name(r: &Report) -> String {
    if r.periods.is_minutes() {
        "minute".to_owned()
    } else {
        format!(
            "period of {}",
            format_duration(Duration::from_nanos(r.periods.period_ns))
        )
    }
}

/// The `cupmon decode` command of the hint.
pub fn decode_command(r: &Report) -> Option<String> {
    let h = r.hint.as_ref()?;
    let dir = r.processes[h.process].dir.display().to_string();
    Some(format!(
        "cupmon decode {} --from {} --to {} --format chrome -o slice.trace.json.gz",
        shell_word(&dir),
        iso_utc(h.from_ns, false),
        iso_utc(h.to_ns, false)
    ))
}

pub fn hint(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let (Some(h), Some(command)) = (&r.hint, decode_command(r)) else {
        return Ok(());
    };
    let per = &r.periods;
    let p = &per.periods[h.period];
    let mut rates: Vec<f64> = per
        .periods
        .iter()
        .filter(|q| q.len_ns == per.period_ns)
        .map(|q| q.kernels_per_s())
        .collect();
    rates.sort_by(f64::total_cmp);
    let median = rates
        .get(rates.len() / 2)
        .copied()
        .unwrap_or(p.kernels_per_s());
    let mut why = format!(
        "The slowest {}: {} &ndash; {}, {:.1} kernels/s (median {:.1}), busy {}",
        period_name(r),
        time(p.start_ns),
        time(p.start_ns + p.len_ns),
        p.kernels_per_s(),
        median,
        percent(Some(p.busy_fraction()))
    );
    if let Some(s) = p.slowest {
        why.push_str(&format!(
            "; the slowest rank in it: {} (the others waited {} ms longer in NCCL kernels)",
            esc(&r.processes[s].label),
            ms(p.gap_ns)
        ));
    }
    writeln!(
        out,
        "<section id=\"hint\"><h2>Next</h2><p>{why}. Look at it in a trace:</p>\
         <pre><code id=\"hint-command\">{}</code></pre>",
        esc(&command)
    )?;
    for p in &r.processes {
        if p.stats.report.dropped_records != Some(0) {
            writeln!(
                out,
                "<p class=\"bad\">{}: records were dropped or the count is unknown; \
                 <code>cupmon stats {}</code> says why and which setting to change.</p>",
                esc(&p.label),
                esc(&shell_word(&p.dir.display().to_string()))
            )?;
        }
    }
    writeln!(out, "</section>")
}

pub fn ranks(out: &mut impl Write, r: &Report) -> io::Result<()> {
    if r.processes.len() < 2 {
        return Ok(());
    }
    let span = r.grid.span_ns().max(1) as f64;
    let per = &r.periods;
    writeln!(
        out,
        "<section id=\"ranks\"><h2>Ranks</h2><p class=\"note\">Busy and NCCL time: unions of \
         kernel intervals per device, as <code>cupmon stats</code> prints them; busy % of the \
         run's span, per device. {}</p>",
        if per.stragglers {
            format!(
                "The slowest rank of a {} is the one with the least time in NCCL kernels: the \
                 others wait in their collectives for it (named when they waited at least \
                 {:.0}% of the {} longer).",
                period_name(r),
                crate::periods::MIN_GAP_SHARE * 100.0,
                if per.is_minutes() { "minute" } else { "period" }
            )
        } else {
            "Fewer than two ranks ran NCCL kernels: the slowest rank cannot be told from \
             waiting in collectives."
                .to_owned()
        }
    )?;
    writeln!(
        out,
        "<table id=\"rank-table\"><thead><tr><th>process</th><th>devices</th><th>kernels</th>\
         <th>busy ms</th><th>busy %</th><th>NCCL ms</th><th>NCCL share of busy</th>\
         <th>slowest in</th></tr></thead><tbody>"
    )?;
    for (i, p) in r.processes.iter().enumerate() {
        let d = &p.stats.collectives.devices;
        let busy: u64 = d.iter().map(|x| x.busy_ns).sum();
        let nccl: u64 = d.iter().map(|x| x.nccl_ns).sum();
        let kernels: u64 = d.iter().map(|x| x.kernels).sum();
        let devices = d.len().max(1) as f64;
        writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{kernels}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&p.label),
            d.len(),
            ms(busy),
            percent(Some(busy as f64 / (span * devices))),
            ms(nccl),
            percent((busy > 0).then(|| nccl as f64 / busy as f64)),
            if per.stragglers {
                format!(
                    "{} of {} {}",
                    per.slowest_counts[i],
                    per.periods.len(),
                    if per.is_minutes() {
                        "minutes".to_owned()
                    } else {
                        period_name(r).replacen("period", "periods", 1)
                    }
                )
            } else {
                "-".to_owned()
            }
        )?;
    }
    writeln!(out, "</tbody></table>")?;
    let worst = per.worst();
    if !worst.is_empty() {
        writeln!(
            out,
            "<h3>Where the others waited longest</h3><table id=\"stragglers\"><thead><tr>\
             <th>{}</th><th>slowest rank</th><th>its NCCL ms</th><th>others' median NCCL ms</th>\
             <th>waited longer, ms</th></tr></thead><tbody>",
            period_name(r)
        )?;
        for i in worst {
            let q = &per.periods[i];
            let s = q.slowest.expect("worst periods have one");
            let own = q.processes[s].nccl_ns;
            writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td></tr>",
                time(q.start_ns),
                esc(&r.processes[s].label),
                ms(own),
                ms(own + q.gap_ns),
                ms(q.gap_ns)
            )?;
        }
        writeln!(out, "</tbody></table>")?;
    }
    writeln!(out, "</section>")
}
