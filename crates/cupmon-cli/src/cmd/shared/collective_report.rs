//! `cupmon stats`' section on NCCL collectives: per device, the share of GPU busy time
//! with an NCCL kernel running ("waiting in collectives"), the part with nothing else
//! running, and the collectives by kernel time; and `cupmon combine`'s line per rank.

use std::io::{self, Write};

use cupmon_records::nccl::CollectiveStats;
use cupmon_records::MetaFile;
use cupmon_trace::RankCollectives;

/// What the figures mean, printed with them.
const DEFINITION: &str = "time with an NCCL kernel running / time with any kernel running, \
                          per device (unions of kernel intervals: NCCL beside compute counts once)";

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_owned(), |s| format!("{:.1}%", s * 100.0))
}

/// The rank the dump's process had (`RANK` at start), when it ran in a distributed job.
fn rank(meta: &MetaFile) -> Option<String> {
    let json = meta.json();
    let value = json
        .get("rank")
        .or_else(|| json.get("distributedInfo")?.get("rank"))?;
    Some(match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

pub fn write(out: &mut impl Write, c: &CollectiveStats, meta: &MetaFile) -> io::Result<()> {
    let who = rank(meta).map_or_else(String::new, |r| format!(", rank {r}"));
    let nccl = c.nccl_kernels();
    if nccl == 0 {
        return writeln!(out, "collectives:     no NCCL kernels{who}");
    }
    writeln!(out, "collectives:     {nccl} NCCL kernels{who}")?;
    writeln!(out, "  waiting in collectives: {DEFINITION}")?;
    for d in &c.devices {
        write!(
            out,
            "  device {}: {:>6} ({:.3} of {:.3} ms busy); NCCL alone, no other kernel: {} \
             ({:.3} ms)",
            d.device,
            percent(d.nccl_share()),
            ms(d.nccl_ns),
            ms(d.busy_ns),
            percent(d.nccl_alone_share()),
            ms(d.nccl_alone_ns)
        )?;
        if d.uncertain_ns > 0 {
            write!(
                out,
                " (up to {:.3} ms less: kernels recorded far out of time order)",
                ms(d.uncertain_ns)
            )?;
        }
        writeln!(out)?;
    }
    writeln!(
        out,
        "  top collectives by NCCL kernel time (sum of durations, all devices):"
    )?;
    writeln!(out, "  {:>10} {:>9}  collective", "total ms", "launches")?;
    for t in &c.collectives {
        writeln!(
            out,
            "  {:>10.3} {:>9}  {}",
            ms(t.total_ns),
            t.launches,
            t.label
        )?;
    }
    Ok(())
}

/// One line per rank with NCCL kernels, then the definition: for `cupmon combine`.
pub fn rank_lines(ranks: &[RankCollectives]) -> Vec<String> {
    let mut lines: Vec<String> = ranks
        .iter()
        .filter(|r| r.stats.nccl_kernels() > 0)
        .map(|r| {
            let devices: Vec<String> = r
                .stats
                .devices
                .iter()
                .map(|d| {
                    format!(
                        "device {} {} ({} with no other kernel)",
                        d.device,
                        percent(d.nccl_share()),
                        percent(d.nccl_alone_share())
                    )
                })
                .collect();
            format!(
                "rank {}: waiting in collectives {}",
                r.rank,
                devices.join(", ")
            )
        })
        .collect();
    if !lines.is_empty() {
        lines.push(format!("  (waiting in collectives: {DEFINITION})"));
    }
    lines
}
