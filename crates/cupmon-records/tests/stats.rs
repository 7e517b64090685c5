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
fn torch_mlp_stats_leave_records_on_another_clock_out_of_the_span() {
    let s = dump_stats(fixture_dir("torch_mlp"), 100, |_| {}).unwrap();
    assert_eq!(s.report.records, 2920);
    assert_eq!(s.distinct_kernels, 20);
    assert_eq!(s.top_kernels.len(), 20);
    assert!(s.top_kernels[0]
        .name
        .starts_with("void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>("));
    assert_eq!(s.top_kernels[0].total_ns, 77_818);
    assert!(s
        .top_kernels
        .windows(2)
        .all(|w| w[0].total_ns >= w[1].total_ns));
    // 281 API records carry ~87 s timestamps (another clock) in this recording.
    assert_eq!(s.off_clock_records, 281);
    assert_eq!(s.first_ns, Some(1_795_979_265_559_699_068));
    assert_eq!(s.last_ns, Some(1_795_979_272_329_596_692));
    assert_eq!(
        s.span_ns(),
        Some(1_795_979_272_329_596_692 - 1_795_979_265_559_699_068)
    );
    assert_eq!(s.memcpy_bytes, 553_004);
}
