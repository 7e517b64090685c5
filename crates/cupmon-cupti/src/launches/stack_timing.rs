//! What reading each launch's Python stack costs, timed inside the program that pays it
//! (`CUPMON_PYTHON_STACK_TIMING=1`): the launch callback reads the clock around its stack
//! read and adds the interval here. For measuring, not for always: the two clock reads
//! cost a launch more than a shallow stack does. A paired run of blocks with stacks on
//! and off (bench/stacks/paired.py) measures the whole effect, caches included, but in a
//! real training step its noise is larger than the effect; this figure is the read
//! alone, with no noise from the rest of the step.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static READS: AtomicU64 = AtomicU64::new(0);
static NANOS: AtomicU64 = AtomicU64::new(0);
/// An empty interval between two clock reads (their own cost), taken off each reading.
static FLOOR_NS: AtomicU64 = AtomicU64::new(0);

/// Stack reads timed, and what they cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StackTiming {
    pub reads: u64,
    /// Mean per read, the clock's own cost taken off.
    pub ns_per_read: f64,
    /// The clock's own cost taken off each interval.
    pub clock_floor_ns: u64,
}

/// Measures the clock's own cost once, before the first timed read (`stacks.rs` turns
/// timing on with the noting of stacks; the counts are the process's, kept across).
pub(crate) fn calibrate() {
    if FLOOR_NS.load(Ordering::Relaxed) == 0 {
        FLOOR_NS.store(clock_floor_ns(), Ordering::Relaxed);
    }
}

/// One stack read, started at `t0`, is done.
#[inline]
pub(crate) fn add(t0: Instant) {
    let ns = t0.elapsed().as_nanos() as u64;
    NANOS.fetch_add(
        ns.saturating_sub(FLOOR_NS.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
    READS.fetch_add(1, Ordering::Relaxed);
}

/// The reads timed so far; `None` when none was.
pub fn python_stack_timing() -> Option<StackTiming> {
    let reads = READS.load(Ordering::Relaxed);
    (reads > 0).then(|| StackTiming {
        reads,
        ns_per_read: NANOS.load(Ordering::Relaxed) as f64 / reads as f64,
        clock_floor_ns: FLOOR_NS.load(Ordering::Relaxed),
    })
}

/// The median of 1001 empty intervals: what two clock reads add to one.
fn clock_floor_ns() -> u64 {
    let mut empty: Vec<u64> = (0..1001)
        .map(|_| {
            let t0 = Instant::now();
            t0.elapsed().as_nanos() as u64
        })
        .collect();
    empty.sort_unstable();
    empty[empty.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_read_is_counted_with_the_clock_floor_taken_off() {
        assert_eq!(python_stack_timing(), None, "nothing timed yet");
        calibrate();
        let t0 = Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        add(t0);
        let t = python_stack_timing().expect("one read timed");
        assert_eq!(t.reads, 1);
        assert!(t.ns_per_read >= 2e6 - t.clock_floor_ns as f64, "{t:?}");
        assert!(t.clock_floor_ns < 1_000_000, "{t:?}");
    }
}
