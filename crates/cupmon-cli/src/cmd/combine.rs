//! `cupmon combine TRACE... -o OUT`: the traces of several ranks as one.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cupmon_trace::{combine_traces, CombineStats};

use crate::cli::CombineArgs;
use crate::exit::BadInput;

pub fn run(args: &CombineArgs) -> Result<i32> {
    let offsets = args
        .offset
        .iter()
        .map(|o| parse_offset(o))
        .collect::<Result<Vec<_>, _>>()?;
    let inputs: Vec<super::Input> = args
        .traces
        .iter()
        .map(|t| super::Input::File(t.as_path()))
        .collect();
    super::check_output(&args.output, &inputs)?;
    let stats = combine_files(&args.traces, &args.output, &offsets)?;
    println!(
        "combined {} traces ({} events) into {}; open it in https://ui.perfetto.dev",
        stats.ranks.len(),
        stats.events,
        args.output.display()
    );
    Ok(0)
}

/// Combine, print each rank's share of GPU time in NCCL collectives, and report the
/// skew the NCCL kernels show (for `cupmon combine` and `cupmon window`).
pub fn combine_files(
    traces: &[PathBuf],
    output: &Path,
    offsets: &[(i64, i64)],
) -> Result<CombineStats> {
    let stats = combine_traces(traces, output, offsets)?;
    for line in super::collective_report::rank_lines(&stats.collectives) {
        println!("{line}");
    }
    for s in &stats.skew {
        if s.median_ns.abs() > 100_000 {
            eprintln!(
                "cupmon: rank {}'s collectives end {:.0} us after the lowest rank's (median of \
                 {}); if the ranks ran on different hosts, pass --offset {}=<-that much>",
                s.rank,
                s.median_ns as f64 / 1e3,
                s.samples,
                s.rank
            );
        }
    }
    Ok(stats)
}

/// `RANK=DURATION` with a sign: `1=-250us`, `3=+1.5ms`.
fn parse_offset(text: &str) -> Result<(i64, i64)> {
    let bad = || {
        BadInput(format!(
            "--offset {text:?}: use RANK=DURATION, e.g. 1=-250us"
        ))
    };
    let (rank, d) = text.split_once('=').ok_or_else(bad)?;
    let rank: i64 = rank.trim().parse().map_err(|_| bad())?;
    let d = d.trim();
    let (sign, magnitude) = match d.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, d.strip_prefix('+').unwrap_or(d)),
    };
    let ns = cupmon_config::units::parse_duration(magnitude)
        .map_err(|_| bad())?
        .as_nanos() as i64;
    Ok((rank, sign * ns))
}
