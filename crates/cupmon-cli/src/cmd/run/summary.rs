//! The one-screen summary `cupmon run` prints for each process it recorded.

use std::path::Path;

use cupmon_records::{dump_stats_slice, ActivityKind, Dump, DumpStats, TimeRange};

/// The lines about the GPU work of a dump's stats: counts, bytes, the time span and
/// each device's busy time (as `stats` prints it).
fn gpu_lines(stats: &DumpStats) -> Vec<String> {
    let count = |kinds: &[ActivityKind]| -> u64 {
        kinds
            .iter()
            .filter_map(|k| stats.report.records_by_kind.get(k))
            .sum()
    };
    let kernels = count(&[ActivityKind::CONCURRENT_KERNEL, ActivityKind::KERNEL]);
    let mut lines = vec![format!(
        "{} kernels, {} copies ({:.1} MB), {} memsets",
        kernels,
        count(&[ActivityKind::MEMCPY]),
        stats.memcpy_bytes as f64 / 1e6,
        count(&[ActivityKind::MEMSET])
    )];
    if let Some(span) = stats.span_ns() {
        lines.push(format!("GPU time span {:.3} s", span as f64 / 1e9));
    }
    lines.extend(crate::cmd::shared::busy_report::lines(stats));
    lines
}

pub fn print(dir: &Path) {
    let dump = match Dump::open(dir) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("cupmon: {}: {e}", dir.display());
            return;
        }
    };
    let stats = dump_stats_slice(&dump, &TimeRange::default(), 0, |_| {});
    let pid = dump
        .meta()
        .pid()
        .map_or_else(|| "?".to_owned(), |p| p.to_string());
    eprintln!("cupmon: pid {pid}: dump in {}", dir.display());
    let stats = match stats {
        Ok(s) => s,
        Err(e) => {
            eprintln!("  cannot read it: {e}");
            return;
        }
    };
    let report = &stats.report;
    for warning in &report.warnings {
        eprintln!("  warning: {warning}");
    }
    for line in gpu_lines(&stats) {
        eprintln!("  {line}");
    }
    if let Some(line) = crate::cmd::shared::worker_report::slow_flush_line(dump.meta()) {
        eprintln!("  {line}");
    }
    let account = cupmon_records::dump::KernelAccount::of(dump.meta());
    eprintln!("  {}", account.line());
    if let Some(warning) = account.warning() {
        eprintln!("  {warning}");
    }
    for line in account.detail_lines(crate::local_time::clock) {
        eprintln!("    {line}");
    }
    match report.dropped_records {
        Some(0) => eprintln!("  dropped records: 0"),
        Some(n) => {
            eprintln!("  dropped records: {n} (CUPTI ran out of buffers; the dump is incomplete)");
            for line in crate::cmd::shared::worker_report::lines(dump.meta()) {
                eprintln!("  {line}");
            }
            if let Some(hint) = crate::cmd::shared::worker_report::drop_hint(dump.meta()) {
                eprintln!("  {hint}");
            }
        }
        None => eprintln!(
            "  dropped records: unknown ({})",
            report
                .dropped_records_note
                .as_deref()
                .unwrap_or("the process did not finish cleanly")
        ),
    }
    let mut traces: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".trace.json.gz"))
        .collect();
    traces.sort();
    for trace in traces {
        eprintln!(
            "  trace window: {} (open it in https://ui.perfetto.dev)",
            trace.display()
        );
    }
    eprintln!(
        "  more: cupmon stats {0}; a trace: cupmon decode {0} --format chrome -o gpu.trace.json.gz",
        dir.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cupmon run`'s summary said 2.7 % busy where `stats`, `report` and SQL said
    /// 1.4 %: it counted copies and memsets in the union (of all devices). Now it
    /// prints each device's kernel-only union, the number `stats` prints: checked
    /// here against the fixture's kernel intervals merged by hand.
    #[test]
    fn run_summary_busy_is_the_kernels_union_that_stats_prints() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/h200-cupti13.0/cuda_workload");
        let dump = Dump::open(&dir).expect("fixture");
        let stats = dump_stats_slice(&dump, &TimeRange::default(), 0, |_| {}).expect("stats");
        let mut kernels = Vec::new();
        let mut with_copies = Vec::new();
        cupmon_records::walk_records(
            &dump,
            |_| {},
            |_, _, r| {
                let (s, e, kernel) = match r {
                    cupmon_records::Record::Kernel(k) => (k.start, k.end, true),
                    cupmon_records::Record::Memcpy(m) => (m.start, m.end, false),
                    cupmon_records::Record::Memset(m) => (m.start, m.end, false),
                    _ => return,
                };
                if s != 0 && e > s {
                    with_copies.push((s, e));
                    if kernel {
                        kernels.push((s, e));
                    }
                }
            },
        )
        .expect("walk");
        let union = |mut v: Vec<(u64, u64)>| {
            v.sort_unstable();
            let (mut total, mut cur) = (0, None::<(u64, u64)>);
            for (s, e) in v {
                cur = match cur {
                    Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
                    Some((cs, ce)) => {
                        total += ce - cs;
                        Some((s, e))
                    }
                    None => Some((s, e)),
                };
            }
            total + cur.map_or(0, |(s, e)| e - s)
        };
        let busy = union(kernels);
        assert!(
            union(with_copies) > busy,
            "the fixture's copies add busy time"
        );
        assert_eq!(stats.collectives.devices.len(), 1);
        assert_eq!(stats.collectives.devices[0].busy_ns, busy);
        let lines = gpu_lines(&stats);
        let want = format!("GPU busy:        device 0 {:.3} ms", busy as f64 / 1e6);
        assert!(lines[2].starts_with(&want), "{lines:?} lacks {want}");
        assert!(
            lines[3].contains("copies and memsets are not counted"),
            "{lines:?}"
        );
    }
}
