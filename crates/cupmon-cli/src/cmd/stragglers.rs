//! `cupmon stragglers TARGET`: the straggler rank of each minute and the kernels
//! behind it, after the fact, from every rank's dump (cupmon-straggler analyses).

use std::io::Write;

use anyhow::{Context, Result};
use cupmon_records::Dump;
use cupmon_report::run_span;
use cupmon_straggler::{analyse, Options};

use super::report::{dump_dirs, order};
use crate::cli::StragglersArgs;
use crate::exit::BadInput;

pub fn run(args: &StragglersArgs) -> Result<i32> {
    if !(args.threshold.is_finite() && args.threshold >= 0.0) {
        return Err(BadInput(format!(
            "--threshold {}: a percentage of 0 or more",
            args.threshold
        ))
        .into());
    }
    let period_ns = u64::try_from(args.period.as_nanos()).unwrap_or(u64::MAX);
    if period_ns < 1_000_000 {
        return Err(BadInput(format!("--period {:?}: at least 1ms", args.period)).into());
    }
    let dirs = dump_dirs(&args.target)?;
    let mut dumps = Vec::with_capacity(dirs.len());
    for dir in &dirs {
        dumps.push(Dump::open(dir).with_context(|| dir.display().to_string())?);
    }
    dumps.sort_by_key(order);
    let slice = args.slice.resolve_in(|| Ok(run_span(&dumps)?))?;
    let options = Options {
        range: slice.map(|s| s.range).unwrap_or_default(),
        period_ns,
        threshold: args.threshold / 100.0,
    };
    let analysis = analyse(&dumps, &options)?;
    for w in &analysis.warnings {
        eprintln!("cupmon: warning: {w}");
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &analysis)?;
        writeln!(out)?;
    } else {
        write!(out, "{analysis}")?;
    }
    out.flush()?;
    Ok(0)
}
