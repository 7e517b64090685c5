//! `dump_stats` on the fixtures: counts, time span, distinct and top kernels.

use super::common::fixture_dir;
use cupmon_records::{dump_stats, ActivityKind};

#[test]
fn cuda_workload_stats() {
    let s = dump_stats(fixture_dir("cuda_workload"), 3, |_| {}).unwrap();
    assert_eq!(s.report.chunks, 2);
    assert_eq!(s.report.records, 308);
    assert_eq!(
        s.report.records_by_kind[&ActivityKind::CONCURRENT_KERNEL],
        16
    );
    assert_eq!(s.report.dropped_records, None);
    assert_eq!(s.distinct_kernels, 4);
    assert_eq!(s.top_kernels.len(), 3);
    let top = &s.top_kernels[0];
    assert_eq!(top.name, "demo::add(float*, float const*, int)");
    assert_eq!((top.launches, top.total_ns), (5, 18_464));
    assert!(top.min_ns <= top.max_ns && top.name_resolved);
    assert_eq!(s.first_ns, Some(1_795_979_258_816_503_710));
    assert_eq!(s.last_ns, Some(1_795_979_259_079_152_058));
    assert_eq!(s.off_clock_records, 0);
    assert_eq!(s.memcpy_bytes, 50_331_648);
}

#[test]
fn torch_mlp_stats_convert_the_records_of_another_clock() {
    let s = dump_stats(fixture_dir("torch_mlp"), 100, |_| {}).unwrap();
    assert_eq!(s.report.records, 2920);
    assert_eq!(s.distinct_kernels, 20);
    assert_eq!(s.top_kernels.len(), 20);
    assert!(s.top_kernels[0]
        .name
        .starts_with("void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>("));
    // torch.profiler's clock counted 77,818 ticks of a ~2.1 GHz counter for it; the
    // rate fitted to three samples 10 ms apart is good to a fraction of a percent.
    let ns = s.top_kernels[0].total_ns as f64;
    assert!((ns / (77_818.0 / 2.1) - 1.0).abs() < 0.005, "{ns}");
    assert_eq!((s.top_kernels[0].launches, s.top_kernels[0].timed), (5, 3));
    assert!(s
        .top_kernels
        .windows(2)
        .all(|w| w[0].total_ns >= w[1].total_ns));
    // 281 records (kernels, copies, memsets and the API calls after torch.profiler
    // started) carry ~87e9-tick timestamps: all converted, none left out.
    assert_eq!(s.report.clock_converted, 281);
    assert_eq!(s.off_clock_records, 0);
    let rate = s.report.foreign_ticks_per_ns.unwrap();
    assert!((rate - 2.1).abs() < 0.001, "{rate}");
    assert_eq!(s.first_ns, Some(1_795_979_265_559_699_068));
    // The last record is the last kernel, converted: inside the last buffer's completion.
    let last = s.last_ns.unwrap();
    assert!(
        last <= 1_795_979_273_079_051_142 && last > 1_795_979_273_070_000_000,
        "{last}"
    );
    assert_eq!(s.memcpy_bytes, 553_004);
}
