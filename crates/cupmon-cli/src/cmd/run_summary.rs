//! The one-screen summary `cupmon run` prints for each process it recorded.

use std::path::Path;

use cupmon_records::{walk_records, Dump, Record};

/// GPU work of one dump: counts, bytes and the busy time of the union of
/// kernel, copy and memset intervals.
#[derive(Debug, Default)]
struct GpuSummary {
    kernels: u64,
    copies: u64,
    copy_bytes: u64,
    memsets: u64,
    intervals: Vec<(u64, u64)>,
}

impl GpuSummary {
    fn add(&mut self, start: u64, end: u64) {
        // Unfinished work (end 0, from a forced flush) has no interval.
        if start != 0 && end > start {
            self.intervals.push((start, end));
        }
    }

    /// (first start, last end, busy ns).
    fn busy(&mut self) -> Option<(u64, u64, u64)> {
        self.intervals.sort_unstable();
        let first = self.intervals.first()?.0;
        let mut last = 0;
        let mut busy = 0;
        let mut current: Option<(u64, u64)> = None;
        for &(s, e) in &self.intervals {
            last = last.max(e);
            current = match current {
                Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    busy += ce - cs;
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
        if let Some((cs, ce)) = current {
            busy += ce - cs;
        }
        Some((first, last, busy))
    }
}

pub fn print(dir: &Path) {
    let dump = match Dump::open(dir) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("cupmon: {}: {e}", dir.display());
            return;
        }
    };
    let mut gpu = GpuSummary::default();
    let report = walk_records(
        &dump,
        |_| {},
        |_, _, record| match record {
            Record::Kernel(k) => {
                gpu.kernels += 1;
                gpu.add(k.start, k.end);
            }
            Record::Memcpy(m) => {
                gpu.copies += 1;
                gpu.copy_bytes += m.bytes;
                gpu.add(m.start, m.end);
            }
            Record::Memset(m) => {
                gpu.memsets += 1;
                gpu.add(m.start, m.end);
            }
            _ => {}
        },
    );
    let pid = dump
        .meta()
        .pid()
        .map_or_else(|| "?".to_owned(), |p| p.to_string());
    eprintln!("cupmon: pid {pid}: dump in {}", dir.display());
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            eprintln!("  cannot read it: {e}");
            return;
        }
    };
    for warning in &report.warnings {
        eprintln!("  warning: {warning}");
    }
    eprintln!(
        "  {} kernels, {} copies ({:.1} MB), {} memsets",
        gpu.kernels,
        gpu.copies,
        gpu.copy_bytes as f64 / 1e6,
        gpu.memsets
    );
    if let Some((first, last, busy)) = gpu.busy() {
        let span = last - first;
        eprintln!(
            "  GPU time span {:.3} s, busy {:.1}% of it",
            span as f64 / 1e9,
            if span > 0 {
                busy as f64 * 100.0 / span as f64
            } else {
                0.0
            }
        );
    }
    if let Some(line) = super::worker_report::slow_flush_line(dump.meta()) {
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
            for line in super::worker_report::lines(dump.meta()) {
                eprintln!("  {line}");
            }
            if let Some(hint) = super::worker_report::drop_hint(dump.meta()) {
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

    #[test]
    fn busy_time_is_the_union_of_intervals() {
        let mut g = GpuSummary::default();
        g.add(10, 20);
        g.add(15, 30);
        g.add(40, 50);
        g.add(5, 0);
        assert_eq!(g.busy(), Some((10, 50, 30)));
    }
}
