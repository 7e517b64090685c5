//! The report's data model against `cupmon stats`' own numbers on the H200 fixtures
//! (top kernels, records, span, dropped records, copy bytes, collectives), the
//! timeline against `Timeline::from_dump` (what `stats --timeline` prints), and the
//! figures the report adds (p50/p99, per-stream busy time) against brute force over
//! the decoded records.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use crate::common::fixture;
use cupmon_records::{
    dump_stats, walk_records, Dump, IntervalUnion, KernelNames, Record, TimeRange, Timeline,
};
use cupmon_report::durations::QUANTILE_ERROR;
use cupmon_report::{build_report, run_span, Options, Report};

fn report_of(dirs: &[std::path::PathBuf], options: &Options) -> (Report, Vec<Dump>) {
    let dumps: Vec<Dump> = dirs.iter().map(|d| Dump::open(d).unwrap()).collect();
    let span = run_span(&dumps).unwrap();
    let report = build_report("t", &dumps, span, options, &|_, _| {}).unwrap();
    (report, dumps)
}

fn options(top: usize) -> Options {
    Options {
        top,
        threads: 2,
        ..Options::default()
    }
}

#[test]
fn a_fixture_report_has_the_numbers_of_stats() {
    for name in ["torch_mlp", "cuda_workload", "torch_transformer/dump"] {
        let dir = fixture(name);
        let (report, _) = report_of(std::slice::from_ref(&dir), &options(usize::MAX));
        let stats = dump_stats(&dir, usize::MAX, |_| {}).unwrap();
        let p = &report.processes[0];
        assert_eq!(p.stats, stats, "{name}: the same summary as stats");
        assert_eq!(report.distinct_kernels, stats.distinct_kernels, "{name}");
        assert_eq!(report.kernels.len(), stats.top_kernels.len(), "{name}");
        let all: u64 = stats.top_kernels.iter().map(|k| k.total_ns).sum();
        assert_eq!(report.kernel_ns, all, "{name}");
        for (row, k) in report.kernels.iter().zip(&stats.top_kernels) {
            assert_eq!(
                (&row.name, row.launches, row.timed, row.total_ns),
                (&k.name, k.launches, k.timed, k.total_ns),
                "{name}: kernels in stats' order with its numbers"
            );
            assert_eq!(row.mean_ns(), k.mean_ns());
            assert!((row.share - k.total_ns as f64 / all as f64).abs() < 1e-12);
        }
        assert_eq!(p.copies.bytes(), stats.memcpy_bytes, "{name}: copy bytes");
        let copies: u64 = p.copies.groups.iter().map(|g| g.count).sum();
        let memcpy = stats
            .report
            .records_by_kind
            .iter()
            .filter(|(k, _)| k.cupti_name() == "MEMCPY")
            .map(|(_, n)| *n)
            .sum::<u64>();
        assert_eq!(copies, memcpy, "{name}: every copy counted");
        // The grid of one dump is the one `stats --timeline` uses for the same bin.
        let dump = Dump::open(&dir).unwrap();
        let bin = Duration::from_nanos(report.grid.bin_ns);
        let (timeline, _) =
            Timeline::from_dump(&dump, &TimeRange::default(), Some(bin), |_| {}).unwrap();
        assert_eq!(
            p.timeline, timeline,
            "{name}: the timeline of stats --timeline"
        );
        assert_eq!(report.grid.from_ns, timeline.from_ns);
        assert_eq!(report.grid.bins(), timeline.bins.len());
        assert!(report.hint.is_some(), "{name}: a slowest period");
    }
}

#[test]
fn a_slice_report_is_stats_of_the_slice() {
    let dir = fixture("torch_mlp");
    let dump = Dump::open(&dir).unwrap();
    let (first, last) = dump.time_span().unwrap().get().unwrap();
    let range = TimeRange::new(Some(first + (last - first) * 9 / 10), Some(last));
    let (report, dumps) = report_of(
        std::slice::from_ref(&dir),
        &Options {
            range,
            ..options(usize::MAX)
        },
    );
    let stats = cupmon_records::dump_stats_slice(&dumps[0], &range, usize::MAX, |_| {}).unwrap();
    assert_eq!(report.processes[0].stats, stats);
    assert!(stats.report.records > 0 && stats.report.records < 2920);
    assert_eq!(
        (report.grid.from_ns, report.grid.to_ns),
        (range.from_ns.unwrap(), last)
    );
}

/// (device, stream) -> (kernels, busy ns).
type StreamFigures = BTreeMap<(u32, u32), (u64, u64)>;

/// Durations by kernel name and stream figures from the records themselves.
fn brute(dir: &std::path::Path) -> (HashMap<String, Vec<u64>>, StreamFigures) {
    let dump = Dump::open(dir).unwrap();
    let mut names = KernelNames::new(dump.kernel_names());
    let mut durations: HashMap<String, Vec<u64>> = HashMap::new();
    let mut intervals: BTreeMap<(u32, u32), Vec<(u64, u64)>> = BTreeMap::new();
    walk_records(
        &dump,
        |_| {},
        |_, _, r| {
            if let Record::Kernel(k) = r {
                if k.start != 0 && k.end >= k.start {
                    let (name, _) = names.name(k.name_ptr);
                    durations
                        .entry(name.to_owned())
                        .or_default()
                        .push(k.end - k.start);
                    intervals
                        .entry((k.device_id, k.stream_id))
                        .or_default()
                        .push((k.start, k.end));
                }
            }
        },
    )
    .unwrap();
    let streams = intervals
        .into_iter()
        .map(|(key, list)| {
            let mut u = IntervalUnion::new();
            for &(s, e) in &list {
                u.add(s, e);
            }
            (key, (list.len() as u64, u.total().0))
        })
        .collect();
    (durations, streams)
}

#[test]
fn quantiles_and_streams_match_brute_force() {
    for name in ["torch_mlp", "cuda_workload", "torch_transformer/dump"] {
        let dir = fixture(name);
        let (report, _) = report_of(std::slice::from_ref(&dir), &options(usize::MAX));
        let (durations, streams) = brute(&dir);
        for row in &report.kernels {
            let mut d = durations.get(&row.name).cloned().unwrap_or_default();
            d.sort_unstable();
            for (q, got) in [(0.5, row.p50_ns), (0.99, row.p99_ns)] {
                let Some(got) = got else {
                    assert!(d.is_empty(), "{name} {}: no quantile", row.name);
                    continue;
                };
                let rank = ((q * d.len() as f64).ceil() as usize).max(1);
                let exact = d[rank - 1] as f64;
                assert!(
                    (got - exact).abs() <= exact * QUANTILE_ERROR,
                    "{name} {} p{q}: {got} vs {exact}",
                    row.name
                );
            }
        }
        let got: StreamFigures = report.processes[0]
            .streams
            .iter()
            .map(|s| ((s.device, s.stream), (s.kernels, s.busy_ns)))
            .collect();
        assert_eq!(got, streams, "{name}: per-stream kernels and busy time");
    }
}

#[test]
fn the_top_option_cuts_the_table_not_the_totals() {
    let dir = fixture("torch_mlp");
    let (all, _) = report_of(std::slice::from_ref(&dir), &options(usize::MAX));
    let (top3, _) = report_of(std::slice::from_ref(&dir), &options(3));
    assert_eq!(top3.kernels.len(), 3);
    assert_eq!(top3.kernels[..], all.kernels[..3]);
    assert_eq!(top3.kernel_ns, all.kernel_ns);
    assert_eq!(top3.distinct_kernels, all.distinct_kernels);
}
