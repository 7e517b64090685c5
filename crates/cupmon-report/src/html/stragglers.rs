//! The compute stragglers (cupmon-straggler, in the minutes [`crate::stragglers`]
//! reads): per minute, the rank whose compute
//! kernels took the most GPU time for the same work, and the kernels (name, grid,
//! block) behind the difference. Beside the ranks table, which finds the rank the
//! others wait for in NCCL; this one says what that rank was computing.

use std::io::{self, Write};

use super::text::{esc, shell_word, time};
use crate::Report;

pub fn write(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let Some(a) = &r.stragglers else {
        return Ok(());
    };
    let compared = a
        .periods
        .iter()
        .filter(|p| p.comparison.not_compared.is_none())
        .count();
    writeln!(
        out,
        "<section id=\"compute-stragglers\"><h2>Stragglers by compute</h2><p class=\"note\">In \
         the minutes (UTC) of the slowest period and of the periods where the others waited \
         longest ({} read; every minute: <code>cupmon stragglers {}</code>), each rank's \
         compute kernels (NCCL kernels left out) by name and launch configuration, their GPU \
         time brought to the same amount of work (launches of the kernels every rank ran, \
         against the median rank). A rank is named when it spends at least {:.1}% more than \
         the other ranks' median; the kernels are those whose time exceeds the others' most. \
         {} of {} minutes compared named a straggler.</p>",
        a.periods.len(),
        esc(&shell_word(&r.target)),
        a.threshold * 100.0,
        a.named().count(),
        compared
    )?;
    let named: Vec<_> = a.named().collect();
    if named.is_empty() {
        return writeln!(out, "</section>");
    }
    writeln!(
        out,
        "<table id=\"compute-straggler-table\"><thead><tr><th>period</th><th>rank</th>\
         <th>more GPU time</th><th>kernels behind it (share of the difference)</th></tr>\
         </thead><tbody>"
    )?;
    for p in named {
        let s = p.comparison.straggler.as_ref().expect("named");
        let kernels: Vec<String> = s
            .kernels
            .iter()
            .map(|k| format!("{} ({:.0}%)", esc(&k.kernel.to_string()), k.share * 100.0))
            .collect();
        writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{:+.1}%</td><td>{}</td></tr>",
            time(p.start_ns),
            esc(&a.ranks[s.rank].label),
            s.score * 100.0,
            kernels.join("<br>")
        )?;
    }
    writeln!(out, "</tbody></table></section>")
}
