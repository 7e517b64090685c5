//! The compute straggler of the last minute, under `cupmon status`'s table: the
//! answering processes' dumps read over their last minute (cupmon-straggler's
//! [`recent`]), each rank's score and the named rank with its kernels.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use cupmon_records::Dump;
use cupmon_straggler::{recent, Recent, THRESHOLD};

/// The window `status` compares ranks over.
pub const WINDOW_NS: u64 = 60_000_000_000;

/// The last minute of `dirs` (the dumps of the processes that answered), `None` for
/// fewer than two. Dumps that cannot be read are a warning and left out.
pub fn last_minute(dirs: &[PathBuf]) -> Option<Recent> {
    if dirs.len() < 2 {
        return None;
    }
    let dumps: Vec<Dump> = dirs
        .iter()
        .filter_map(|d| match Dump::open(d) {
            Ok(dump) => Some(dump),
            Err(e) => {
                eprintln!(
                    "cupmon: warning: {}: {e}: left out of the straggler comparison",
                    d.display()
                );
                None
            }
        })
        .collect();
    if dumps.len() < 2 {
        return None;
    }
    match recent(&dumps, WINDOW_NS, THRESHOLD) {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("cupmon: warning: no straggler comparison: {e}");
            None
        }
    }
}

pub fn print(out: &mut impl Write, r: &Recent) -> Result<()> {
    let c = &r.comparison;
    if let Some(why) = &c.not_compared {
        writeln!(
            out,
            "stragglers (last minute of the dumps): not compared: {why}"
        )?;
        return Ok(());
    }
    let scores: Vec<String> = r
        .ranks
        .iter()
        .filter_map(|k| Some(format!("{} {:+.1}%", k.label, k.score? * 100.0)))
        .collect();
    writeln!(
        out,
        "stragglers (last minute of the dumps, compute GPU time per unit of work against \
         the other ranks' median): {}",
        scores.join(", ")
    )?;
    match &c.straggler {
        None => writeln!(
            out,
            "  no straggler (none {:.1}% or more above the others)",
            THRESHOLD * 100.0
        )?,
        Some(s) => {
            writeln!(
                out,
                "  STRAGGLER: {} {:+.1}%, from:",
                r.ranks[s.rank].label,
                s.score * 100.0
            )?;
            for k in &s.kernels {
                writeln!(out, "    {:>5.1}%  {}", k.share * 100.0, k.kernel)?;
            }
        }
    }
    Ok(())
}
