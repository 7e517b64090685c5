//! The run in periods (a minute for runs of 10 minutes or more): per period and
//! process, kernels, busy time and time in NCCL kernels, summed from the timeline's
//! bins; the slowest period (fewest kernels per second, all processes together: for
//! a job that repeats the same steps, kernels/s is its speed); and, for several ranks
//! with collectives, the slowest rank of each period.
//!
//! The slowest rank is the one with the least time in NCCL kernels: ranks that arrive
//! at a collective first wait in it for the last one, so the rank everybody waits for
//! spends the least time there (a rank with no GPU activity at all waits least). A
//! period has a slowest rank only when the others waited at least 1% of the period
//! longer than it: below that, who is "slowest" changes step by step with noise.

use cupmon_records::timeline::auto_bin;

use crate::collect::ProcessData;
use crate::Grid;

/// Runs at least this long are cut into minutes.
const MINUTES_FROM_NS: u64 = 10 * 60_000_000_000;
const MINUTE_NS: u64 = 60_000_000_000;
/// The least gap, as a share of the period, that makes a rank the slowest.
pub const MIN_GAP_SHARE: f64 = 0.01;
/// How many of the worst periods the straggler table lists.
pub const WORST: usize = 10;

/// One process in one period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessPeriod {
    pub kernels: u64,
    /// Summed over the process's devices.
    pub busy_ns: u64,
    pub devices: usize,
    pub nccl_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub start_ns: u64,
    pub len_ns: u64,
    /// By process, in the report's order.
    pub processes: Vec<ProcessPeriod>,
    /// The slowest rank (a process index), when the run has collectives.
    pub slowest: Option<usize>,
    /// How much longer the other ranks waited in NCCL than the slowest (their median
    /// minus its time), when there is a slowest.
    pub gap_ns: u64,
}

impl Period {
    pub fn kernels(&self) -> u64 {
        self.processes.iter().map(|p| p.kernels).sum()
    }

    pub fn kernels_per_s(&self) -> f64 {
        self.kernels() as f64 * 1e9 / self.len_ns.max(1) as f64
    }

    /// Busy time over the period, averaged over every device of every process.
    pub fn busy_fraction(&self) -> f64 {
        let devices: usize = self.processes.iter().map(|p| p.devices).sum();
        let busy: u64 = self.processes.iter().map(|p| p.busy_ns).sum();
        if devices == 0 {
            return 0.0;
        }
        busy as f64 / (self.len_ns.max(1) as f64 * devices as f64)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Periods {
    pub period_ns: u64,
    pub periods: Vec<Period>,
    /// Whether slowest ranks were found (two or more processes with NCCL kernels).
    pub stragglers: bool,
    /// By process: periods in which it was the slowest.
    pub slowest_counts: Vec<u64>,
    /// Index of the slowest period.
    pub slowest_period: Option<usize>,
}

impl Periods {
    /// `minute`, or `20 s` (for labels: "slowest rank per minute").
    pub fn is_minutes(&self) -> bool {
        self.period_ns == MINUTE_NS
    }

    /// The periods with the largest gaps, largest first (at most [`WORST`]).
    pub fn worst(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.periods.len())
            .filter(|&i| self.periods[i].slowest.is_some() && self.periods[i].gap_ns > 0)
            .collect();
        idx.sort_by_key(|&i| (std::cmp::Reverse(self.periods[i].gap_ns), i));
        idx.truncate(WORST);
        idx
    }
}

/// How many bins make a period.
fn bins_per_period(grid: &Grid) -> usize {
    let target = if grid.span_ns() >= MINUTES_FROM_NS {
        MINUTE_NS
    } else {
        u64::try_from(auto_bin(grid.span_ns()).as_nanos()).unwrap_or(u64::MAX)
    };
    target.div_ceil(grid.bin_ns).max(1) as usize
}

pub fn periods(grid: &Grid, processes: &[ProcessData]) -> Periods {
    let k = bins_per_period(grid);
    let n = grid.bins();
    let mut periods = Vec::new();
    for first in (0..n).step_by(k) {
        let last = (first + k).min(n);
        let start_ns = grid.from_ns + first as u64 * grid.bin_ns;
        let end_ns = (grid.from_ns + last as u64 * grid.bin_ns).min(grid.to_ns);
        let of = |p: &ProcessData| {
            let bins = &p.timeline.bins[first..last];
            ProcessPeriod {
                kernels: bins.iter().map(|b| b.kernels).sum(),
                busy_ns: bins.iter().flat_map(|b| &b.busy_ns).sum(),
                devices: p.timeline.devices.len(),
                nccl_ns: p.nccl.bins[first..last]
                    .iter()
                    .flat_map(|b| &b.busy_ns)
                    .sum(),
            }
        };
        periods.push(Period {
            start_ns,
            len_ns: end_ns - start_ns,
            processes: processes.iter().map(of).collect(),
            slowest: None,
            gap_ns: 0,
        });
    }
    let ranks: Vec<usize> = (0..processes.len())
        .filter(|&i| processes[i].stats.collectives.nccl_kernels() > 0)
        .collect();
    let stragglers = ranks.len() >= 2;
    let mut slowest_counts = vec![0; processes.len()];
    if stragglers {
        for p in &mut periods {
            if ranks.iter().all(|&r| p.processes[r].nccl_ns == 0) {
                continue;
            }
            // Least time in NCCL; ties go to the lower index, for a stable page.
            let &slow = ranks
                .iter()
                .min_by_key(|&&r| (p.processes[r].nccl_ns, r))
                .expect("two ranks");
            let mut others: Vec<u64> = ranks
                .iter()
                .filter(|&&r| r != slow)
                .map(|&r| p.processes[r].nccl_ns)
                .collect();
            others.sort_unstable();
            let gap = others[others.len() / 2] - p.processes[slow].nccl_ns;
            if (gap as f64) < MIN_GAP_SHARE * p.len_ns as f64 {
                continue;
            }
            p.slowest = Some(slow);
            p.gap_ns = gap;
            slowest_counts[slow] += 1;
        }
    }
    Periods {
        period_ns: k as u64 * grid.bin_ns,
        slowest_period: slowest_period(&periods, k as u64 * grid.bin_ns),
        periods,
        stragglers,
        slowest_counts,
    }
}

/// The full period with the fewest kernels per second (ties: the lower busy time,
/// then the earlier) from the first to the last with kernels; any period there when
/// none is full; `None` without kernels.
fn slowest_period(periods: &[Period], period_ns: u64) -> Option<usize> {
    // Between the first and the last period with kernels: a GPU idle before the job
    // starts or after it ends is no slowdown, one idle in the middle is.
    let active = |i: &usize| periods[*i].kernels() > 0;
    let first = (0..periods.len()).find(active)?;
    let last = (0..periods.len()).rev().find(active)?;
    let full: Vec<usize> = (first..=last)
        .filter(|&i| periods[i].len_ns == period_ns)
        .collect();
    let pool = if full.is_empty() {
        (first..=last).collect()
    } else {
        full
    };
    pool.into_iter().min_by(|&a, &b| {
        let (pa, pb) = (&periods[a], &periods[b]);
        pa.kernels_per_s()
            .total_cmp(&pb.kernels_per_s())
            .then(pa.busy_fraction().total_cmp(&pb.busy_fraction()))
            .then(a.cmp(&b))
    })
}
