//! Reports of synthetic multi-rank runs: the slowest rank of each minute and the hint
//! for a job with a known straggler, the page's chart data, the window marks, and the
//! page's size for 24 hours of 8 ranks (under 5 MB: bins, not events).

use crate::common::{job, write_run, MS, S, T0};
use cupmon_records::Dump;
use cupmon_report::{build_report, run_span, write_html, Options, Report};
use serde_json::Value;

fn report_of(dirs: &[std::path::PathBuf]) -> Report {
    let dumps: Vec<Dump> = dirs.iter().map(|d| Dump::open(d).unwrap()).collect();
    let span = run_span(&dumps).unwrap();
    let options = Options {
        top: 20,
        threads: 2,
        ..Options::default()
    };
    build_report("run", &dumps, span, &options, &|_, _| {}).unwrap()
}

fn page(report: &Report, dir: &std::path::Path) -> String {
    let mut out = Vec::new();
    write_html(report, dir, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn chart_data(html: &str) -> Value {
    let start = html.find("id=\"report-data\">").unwrap() + "id=\"report-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn a_straggler_is_the_slowest_rank_of_its_minutes_and_the_hint_points_at_it() {
    let tmp = tempfile::tempdir().unwrap();
    // 10 minutes of 1 s steps; rank 1 computes 1.5x slower in steps 180..300.
    let dirs = write_run(tmp.path(), &job(3, 600, S, 1, 180..300, 1.5), 200);
    std::fs::write(
        dirs[0].join("window-0.json"),
        format!(
            r#"{{"events":[{{"kind":"kernel","start_ns":{},"end_ns":{}}}]}}"#,
            T0 + 30 * S,
            T0 + 32 * S
        ),
    )
    .unwrap();
    let report = report_of(&dirs);
    let per = &report.periods;
    assert!(per.is_minutes() && per.stragglers);
    let slowest: Vec<Option<usize>> = per.periods.iter().map(|p| p.slowest).collect();
    assert_eq!(
        &slowest[..5],
        &[None, None, None, Some(1), Some(1)],
        "{slowest:?}"
    );
    assert!(slowest[6..].iter().all(Option::is_none), "{slowest:?}");
    assert_eq!((per.slowest_counts[0], per.slowest_counts[2]), (0, 0));
    // In a slow minute the others wait 0.3 s more per step, about 59 steps.
    let gap = per.periods[3].gap_ns;
    assert!((17 * S..18 * S).contains(&gap), "{gap}");
    let hint = report.hint.as_ref().unwrap();
    assert!([3, 4].contains(&hint.period), "{hint:?}");
    assert_eq!(hint.process, 1);
    assert_eq!(hint.from_ns % S, 0);
    // NCCL time as stats counts it: 0.1 s a step, 0.3 s more in the 120 slow steps.
    let nccl: Vec<u64> = report
        .processes
        .iter()
        .map(|p| p.stats.collectives.devices[0].nccl_ns)
        .collect();
    assert_eq!(nccl, vec![96 * S, 60 * S, 96 * S]);

    let html = page(&report, tmp.path());
    assert!(html.contains("id=\"rank-table\""));
    assert!(html.contains(&format!("cupmon decode {} --from", dirs[1].display())));
    let data = chart_data(&html);
    assert_eq!(data["bins"].as_u64().unwrap() as usize, report.grid.bins());
    for key in ["busy", "kernels", "copies", "nccl"] {
        assert_eq!(data[key].as_array().unwrap().len(), 3, "{key}");
        assert_eq!(
            data[key][0]["v"].as_array().unwrap().len(),
            report.grid.bins(),
            "{key}"
        );
    }
    let ranks = data["slowest_rank"].as_array().unwrap();
    assert_eq!((ranks[2].as_i64(), ranks[3].as_i64()), (Some(-1), Some(1)));
    let w = &data["windows"][0];
    assert_eq!(
        w["href"],
        format!(
            "{}/window-0.json",
            dirs[0].file_name().unwrap().to_str().unwrap()
        )
    );
    assert_eq!(w["b"].as_f64().unwrap() - w["a"].as_f64().unwrap(), 2000.0);
    // Busy %: kernels from 0.02 s to 0.72 s of each 1 s step, in bins of 0.5 s.
    assert_eq!(report.grid.bin_ns, 500 * MS);
    let busy = |i: usize| data["busy"][0]["v"][i].as_f64().unwrap();
    assert_eq!((busy(10), busy(11)), (96.0, 44.0));
}

#[test]
fn a_day_of_eight_ranks_makes_a_page_under_5_mb() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = write_run(tmp.path(), &job(8, 2880, 30 * S, 3, 1000..1100, 2.0), 1000);
    let report = report_of(&dirs);
    assert_eq!(report.grid.bin_ns, 60 * S, "one-minute bins for a day");
    assert!(report.grid.bins() >= 1440);
    let html = page(&report, tmp.path());
    eprintln!(
        "24 h x 8 ranks: {} bins, page {} bytes",
        report.grid.bins(),
        html.len()
    );
    assert!(html.len() < 5_000_000, "{} bytes", html.len());
    assert!(
        html.len() > 100_000,
        "the bins are in it: {} bytes",
        html.len()
    );
    assert_eq!(report.processes.len(), 8);
    assert!(report.periods.slowest_counts[3] > 0);
}
