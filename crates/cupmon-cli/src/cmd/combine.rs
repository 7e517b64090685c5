//! `cupmon combine TRACE... -o OUT`: the traces of several ranks as one.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cupmon_trace::{combine_traces_as, CombineStats, RankSpan, TraceFormat};

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
    super::check_output_name(&args.output, super::Writes::Trace)?;
    let format = args.format;
    let stats = combine_files(&args.traces, &args.output, &offsets, format)?;
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
    format: Option<TraceFormat>,
) -> Result<CombineStats> {
    let stats = combine_traces_as(traces, output, offsets, format)?;
    for w in stats.pftrace.iter().flat_map(|p| p.warnings()) {
        eprintln!("cupmon: warning: {}: {w}", output.display());
    }
    warn_of_ranks(&stats);
    for line in super::shared::collective_report::rank_lines(&stats.collectives) {
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

/// Inputs numbered as ranks by their order, and inputs whose times do not meet: a
/// combined trace of them would look like one job's ranks and is not.
fn warn_of_ranks(stats: &CombineStats) {
    if !stats.numbered.is_empty() {
        let list: Vec<String> = stats
            .numbered
            .iter()
            .map(|n| format!("{} as rank {}", n.file.display(), n.rank))
            .collect();
        eprintln!(
            "cupmon: warning: {} of {} traces carry no distributedInfo, so their ranks are \
             their places in the list: {}; give each its rank with `cupmon decode --rank R` \
             or `cupmon export --rank R`",
            stats.numbered.len(),
            stats.ranks.len(),
            list.join(", ")
        );
    }
    if let Some(first) = stats.disjoint.first() {
        let start = first.0.start_ns.min(first.1.start_ns);
        let at = |s: &RankSpan| {
            format!(
                "rank {} ({}) {:.3} to {:.3} s",
                s.rank,
                s.file.display(),
                (s.start_ns - start) as f64 / 1e9,
                (s.end_ns - start) as f64 / 1e9
            )
        };
        eprintln!(
            "cupmon: warning: THE TRACES DO NOT OVERLAP IN TIME ({} pair{}), e.g. {} and {}: \
             they are not one job's ranks at one time (or their hosts' clocks differ: \
             --offset RANK=DURATION); the combined trace shows them apart",
            stats.disjoint.len(),
            if stats.disjoint.len() == 1 { "" } else { "s" },
            at(&first.0),
            at(&first.1)
        );
    }
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

/// Combine the traces of one window in several processes, each given as
/// (trace, window JSON), into `output` or `dir/window-STAMP.combined.trace.*`
/// (`.pftrace` when the processes wrote Perfetto traces: CUPMON_TRACE_FORMAT).
pub fn combine_windows(
    traces: &[(PathBuf, PathBuf)],
    output: Option<PathBuf>,
    dir: &Path,
    stamp: u64,
) -> Result<(PathBuf, CombineStats)> {
    let pftrace = traces.iter().any(|(t, _)| cupmon_trace::is_pftrace_path(t));
    let output = output.unwrap_or_else(|| {
        let ext = if pftrace { "pftrace" } else { "json.gz" };
        dir.join(format!("window-{stamp}.combined.trace.{ext}"))
    });
    let scratch = tempfile::tempdir()?;
    let inputs = json_traces(traces, scratch.path())?;
    let stats = combine_files(&inputs, &output, &[], None)?;
    Ok((output, stats))
}

/// Chrome JSON traces of the windows, for the combine (which reads JSON): the
/// traces themselves, or for a Perfetto trace its window exported into `scratch`.
fn json_traces(traces: &[(PathBuf, PathBuf)], scratch: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for (i, (trace, window)) in traces.iter().enumerate() {
        if !cupmon_trace::is_pftrace_path(trace) {
            out.push(trace.clone());
            continue;
        }
        let json = scratch.join(format!("window-{i}.trace.json"));
        let w = cupmon_trace::MergeWindow::read(window)?;
        let name = trace.display().to_string();
        cupmon_trace::export_window(
            &w,
            &json,
            &cupmon_trace::ExportOptions {
                trace_name: Some(name),
                ..Default::default()
            },
        )?;
        out.push(json);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: &str = r#"{"events":[{"kind":"kernel","device_id":0,"context_id":1,"stream_id":7,"correlation_id":3,"start_ns":1790857026000005000,"end_ns":1790857026000006000,"name":"k"}]}"#;

    /// `cupmon window`/`cupmon run` with CUPMON_TRACE_FORMAT=pftrace: each
    /// process wrote a .pftrace beside its window JSON; the combine reads the
    /// windows (it reads JSON only) and writes one .pftrace with both.
    #[test]
    fn windows_written_as_pftrace_combine_into_one_pftrace_with_every_process() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut traces = Vec::new();
        for i in 0..2 {
            let window = dir.path().join(format!("window-{i}.json"));
            std::fs::write(&window, WINDOW).expect("write");
            let trace = dir.path().join(format!("window-{i}.trace.pftrace"));
            let w = cupmon_trace::MergeWindow::read(&window).expect("window");
            let options = cupmon_trace::ExportOptions::default();
            cupmon_trace::export_window(&w, &trace, &options).expect("export");
            traces.push((trace, window));
        }
        let (out, stats) = combine_windows(&traces, None, dir.path(), 7).expect("combine");
        assert_eq!(out, dir.path().join("window-7.combined.trace.pftrace"));
        assert_eq!(stats.ranks.len(), 2);
        let pf = stats.pftrace.expect("a Perfetto trace");
        // Per process: the kernel and the profiler span.
        assert_eq!(pf.slices, 4, "{pf:?}");
        let bytes = std::fs::read(&out).expect("combined trace");
        // Trace.packet (field 1, length-delimited) first, as Perfetto reads it.
        assert_eq!(bytes.first(), Some(&0x0a));
        assert_eq!(pf.bytes, bytes.len() as u64);

        // A JSON window beside them keeps the JSON name.
        let json = dir.path().join("window-2.trace.json");
        let w = cupmon_trace::MergeWindow::read(&traces[0].1).expect("window");
        cupmon_trace::export_window(&w, &json, &Default::default()).expect("export");
        let mixed = [(json.clone(), traces[0].1.clone())];
        let (out, stats) = combine_windows(&mixed, None, dir.path(), 8).expect("combine");
        assert_eq!(out, dir.path().join("window-8.combined.trace.json.gz"));
        assert!(stats.pftrace.is_none());
    }
}
