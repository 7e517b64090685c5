//! The launch counters: one shard per thread (up to [`SHARDS`], then shared), each on
//! its own cache lines, bumped with a relaxed add. Nothing on the launch path locks,
//! allocates or writes a line another launching thread writes.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// More threads than this share shards (still exact: the adds are atomic).
pub const SHARDS: usize = 64;

/// The counters of one shard, alone on two cache lines (adjacent-line prefetch).
#[repr(align(128))]
#[derive(Debug)]
struct Shard {
    /// Kernels launched, eagerly and by graphs.
    kernels: AtomicU64,
    /// Kernels launched by graphs (part of `kernels`).
    graph_kernels: AtomicU64,
    graph_launches: AtomicU64,
    /// Graph launches of executable graphs whose kernels cupmon could not count
    /// (instantiated before counting began, or with conditional nodes).
    unsized_graph_launches: AtomicU64,
}

impl Shard {
    const fn new() -> Self {
        Self {
            kernels: AtomicU64::new(0),
            graph_kernels: AtomicU64::new(0),
            graph_launches: AtomicU64::new(0),
            unsized_graph_launches: AtomicU64::new(0),
        }
    }
}

static TABLE: [Shard; SHARDS] = [const { Shard::new() }; SHARDS];
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
    /// Launch calls of this thread entered and not yet left: a launch made inside
    /// another (a runtime call that reaches a counted driver call) counts once.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The launch call in progress made a kernel node of a graph being captured
    /// instead of running a kernel.
    static CAPTURED: Cell<bool> = const { Cell::new(false) };
}

fn shard() -> &'static Shard {
    let index = MINE.with(|mine| {
        let mut index = mine.get();
        if index == usize::MAX {
            index = NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS;
            mine.set(index);
        }
        index
    });
    &TABLE[index]
}

/// A launch call entered on this thread; true when it is the outermost one.
#[inline]
pub(crate) fn enter() -> bool {
    DEPTH.with(|d| {
        let depth = d.get();
        d.set(depth.saturating_add(1));
        depth == 0
    })
}

/// A launch call left on this thread; true when it was the outermost one and it
/// launched work (rather than adding a node to a graph being captured).
#[inline]
pub(crate) fn leave() -> bool {
    let outermost = DEPTH.with(|d| {
        let depth = d.get().saturating_sub(1);
        d.set(depth);
        depth == 0
    });
    outermost && !CAPTURED.replace(false)
}

/// A kernel node was created on this thread: inside a launch call, the launch is
/// being captured into a graph and runs nothing.
pub(crate) fn kernel_node_created() {
    if DEPTH.get() > 0 {
        CAPTURED.set(true);
    }
}

#[inline]
pub(crate) fn add_kernel() {
    shard().kernels.fetch_add(1, Ordering::Relaxed);
}

/// One graph launch of `kernels` kernels (`None`: not known).
#[inline]
pub(crate) fn add_graph(kernels: Option<u64>) {
    let s = shard();
    s.graph_launches.fetch_add(1, Ordering::Relaxed);
    match kernels {
        Some(n) => {
            s.kernels.fetch_add(n, Ordering::Relaxed);
            s.graph_kernels.fetch_add(n, Ordering::Relaxed);
        }
        None => {
            s.unsized_graph_launches.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The counts so far, summed over the shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchCounts {
    /// Kernels launched, eagerly and by graphs.
    pub kernels: u64,
    /// The part of `kernels` launched by graphs.
    pub graph_kernels: u64,
    pub graph_launches: u64,
    /// Graph launches whose kernels could not be counted: `kernels` is then a lower
    /// bound.
    pub unsized_graph_launches: u64,
}

impl LaunchCounts {
    /// `self - earlier`, counter by counter.
    pub fn since(&self, earlier: &LaunchCounts) -> LaunchCounts {
        LaunchCounts {
            kernels: self.kernels.saturating_sub(earlier.kernels),
            graph_kernels: self.graph_kernels.saturating_sub(earlier.graph_kernels),
            graph_launches: self.graph_launches.saturating_sub(earlier.graph_launches),
            unsized_graph_launches: self
                .unsized_graph_launches
                .saturating_sub(earlier.unsized_graph_launches),
        }
    }
}

/// Every launch counted since the process began counting (counts only grow; a
/// session takes the difference from its start).
pub fn launch_counts() -> LaunchCounts {
    let mut total = LaunchCounts::default();
    for s in &TABLE {
        total.kernels += s.kernels.load(Ordering::Relaxed);
        total.graph_kernels += s.graph_kernels.load(Ordering::Relaxed);
        total.graph_launches += s.graph_launches.load(Ordering::Relaxed);
        total.unsized_graph_launches += s.unsized_graph_launches.load(Ordering::Relaxed);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_add_up_to_the_kernel() {
        let before = launch_counts();
        let threads: Vec<_> = (0..80)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..1000 {
                        add_kernel();
                    }
                    add_graph(Some(7));
                    add_graph(None);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let d = launch_counts().since(&before);
        // Other unit tests of this crate may count too, but none runs graphs of 7.
        assert!(d.kernels >= 80 * 1007, "{d:?}");
        assert!(d.graph_kernels >= 80 * 7);
        assert!(d.unsized_graph_launches >= 80);
    }

    #[test]
    fn nested_launch_calls_count_once() {
        enter();
        enter();
        assert!(!leave());
        assert!(leave());
        assert!(leave(), "an exit without its enter still counts");
    }

    #[test]
    fn a_captured_launch_does_not_count() {
        kernel_node_created(); // outside a launch call: a node added by hand
        enter();
        assert!(leave());
        enter();
        kernel_node_created();
        assert!(!leave(), "captured into a graph: nothing ran");
        enter();
        assert!(leave(), "the next launch counts again");
    }
}
