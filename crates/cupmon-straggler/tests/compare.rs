//! The measure on hand-made periods: a rank doing extra work per step, a rank whose
//! kernel runs slower, ranks doing fewer steps at the same speed, and balanced ranks
//! with noise.

use cupmon_straggler::{compare, KernelKey, PeriodTotals, Totals, THRESHOLD};

fn key(name: &str) -> KernelKey {
    KernelKey {
        name: name.to_owned(),
        grid: [128, 1, 1],
        block: [256, 1, 1],
    }
}

/// A rank that ran `steps` steps of `kernels` (name, launches per step, ns each).
fn rank(steps: u64, kernels: &[(&str, u64, u64)]) -> PeriodTotals {
    let mut p = PeriodTotals::default();
    for &(name, per_step, ns) in kernels {
        p.compute.insert(
            key(name),
            Totals {
                launches: steps * per_step,
                ns: steps * per_step * ns,
            },
        );
    }
    p
}

const STEP: [(&str, u64, u64); 3] = [
    ("gemm", 4, 50_000),
    ("softmax", 2, 25_000),
    ("add", 10, 5_000),
];

fn step_with(extra: &[(&'static str, u64, u64)]) -> Vec<(&'static str, u64, u64)> {
    STEP.iter().chain(extra).copied().collect()
}

#[test]
fn a_rank_with_an_extra_kernel_per_step_is_named_with_that_kernel() {
    // A step is 300 us of kernels; the extra kernel adds 15 us: 5%.
    let extra = step_with(&[("sleep_kernel", 1, 15_000)]);
    let ranks = [
        rank(1000, &STEP),
        rank(1000, &extra),
        rank(1000, &STEP),
        rank(1000, &STEP),
    ];
    let c = compare(&ranks.iter().map(Some).collect::<Vec<_>>(), THRESHOLD);
    let s = c.straggler.expect("a straggler");
    assert_eq!(s.rank, 1);
    assert!((s.score - 0.05).abs() < 1e-9, "{}", s.score);
    assert_eq!(s.kernels[0].kernel, key("sleep_kernel"));
    assert!((s.kernels[0].share - 1.0).abs() < 1e-9);
    assert_eq!(
        s.kernels.len(),
        1,
        "only the extra kernel differs: {:?}",
        s.kernels
    );
}

#[test]
fn a_rank_doing_the_same_work_slower_is_named_with_the_slow_kernel() {
    // softmax 30% slower on rank 2: 2 x 7.5 us more per 300 us step = 5%.
    let slow = [
        ("gemm", 4, 50_000),
        ("softmax", 2, 32_500),
        ("add", 10, 5_000),
    ];
    let ranks = [rank(900, &STEP), rank(900, &STEP), rank(900, &slow)];
    let c = compare(&ranks.iter().map(Some).collect::<Vec<_>>(), THRESHOLD);
    let s = c.straggler.expect("a straggler");
    assert_eq!(s.rank, 2);
    assert_eq!(s.kernels[0].kernel, key("softmax"));
    assert_eq!(s.kernels[0].launches, 1800);
}

#[test]
fn ranks_that_ran_fewer_steps_at_the_same_speed_are_not_stragglers() {
    // Unsynchronised ranks (or a period cut mid-run): fewer steps, same speed.
    let ranks = [rank(1000, &STEP), rank(700, &STEP), rank(950, &STEP)];
    let c = compare(&ranks.iter().map(Some).collect::<Vec<_>>(), THRESHOLD);
    assert_eq!(c.straggler, None, "{c:?}");
    for s in &c.scores {
        assert!(s.score.abs() < 1e-9, "{s:?}");
    }
    // The slow rank of two unsynchronised ranks runs fewer steps and is still found.
    let extra = step_with(&[("sleep_kernel", 1, 15_000)]);
    let ranks = [rank(1000, &STEP), rank(952, &extra)];
    let c = compare(&ranks.iter().map(Some).collect::<Vec<_>>(), THRESHOLD);
    assert_eq!(c.straggler.expect("a straggler").rank, 1);
}

#[test]
fn balanced_ranks_with_noise_name_no_straggler() {
    // Every rank's kernels within +-1.5% of each other.
    let noisy = |f: f64| -> Vec<(&'static str, u64, u64)> {
        STEP.iter()
            .map(|&(n, k, ns)| (n, k, (ns as f64 * f) as u64))
            .collect()
    };
    let ranks = [
        rank(1000, &noisy(1.0)),
        rank(1000, &noisy(1.015)),
        rank(998, &noisy(0.985)),
        rank(1001, &noisy(1.01)),
    ];
    let c = compare(&ranks.iter().map(Some).collect::<Vec<_>>(), THRESHOLD);
    assert_eq!(c.straggler, None, "{c:?}");
    assert_eq!(c.scores.len(), 4);
}

#[test]
fn periods_with_too_little_work_are_not_compared() {
    let ranks = [rank(3, &STEP), rank(1000, &STEP)];
    let c = compare(&ranks.iter().map(Some).collect::<Vec<_>>(), THRESHOLD);
    assert!(c.not_compared.unwrap().contains("fewer than two ranks"));
    let c = compare(&[Some(&rank(1000, &STEP)), None], THRESHOLD);
    assert!(c.not_compared.is_some());
    let other = rank(1000, &[("other", 10, 1000)]);
    let c = compare(&[Some(&rank(1000, &STEP)), Some(&other)], THRESHOLD);
    assert_eq!(
        c.not_compared.as_deref(),
        Some("no compute kernel ran on every rank")
    );
}
