//! Where the worker's time goes. When CUPTI drops records because the worker
//! fell behind, this says why: writing the dump (on a CPU, waiting for a CPU,
//! or blocked in the kernel, i.e. the disk) or reading records.
//!
//! CPU and run-queue times come from `/proc/thread-self/schedstat` (read
//! twice per buffer, a few microseconds against milliseconds of writing), so
//! no unsafe code and no `perf` are needed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::meta::MetaEntry;

/// A thread's time on a CPU and waiting in the run queue, in ns.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ThreadTimes {
    on_cpu: u64,
    waiting_for_cpu: u64,
}

impl ThreadTimes {
    /// None where the kernel has no schedstat (then only wall time is kept).
    pub fn now() -> Option<Self> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        let mut fields = text.split_ascii_whitespace().map(str::parse::<u64>);
        Some(Self {
            on_cpu: fields.next()?.ok()?,
            waiting_for_cpu: fields.next()?.ok()?,
        })
    }
}

/// The worker's running totals, updated by the worker and read by `stats()`.
#[derive(Debug, Default)]
pub(crate) struct WorkerTimes {
    alive_ns: AtomicU64,
    busy_ns: AtomicU64,
    write_ns: AtomicU64,
    write_on_cpu_ns: AtomicU64,
    write_waiting_for_cpu_ns: AtomicU64,
    read_ns: AtomicU64,
    max_buffers_waiting: AtomicU64,
}

/// Timing of one buffer's writing, started just before it.
pub(crate) struct WriteTimer {
    wall: Instant,
    thread: Option<ThreadTimes>,
}

impl WriteTimer {
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            thread: ThreadTimes::now(),
        }
    }
}

impl WorkerTimes {
    pub fn note_write(&self, timer: WriteTimer) {
        add(&self.write_ns, timer.wall.elapsed().as_nanos() as u64);
        if let (Some(before), Some(after)) = (timer.thread, ThreadTimes::now()) {
            let on_cpu = after.on_cpu.saturating_sub(before.on_cpu);
            let waiting = after.waiting_for_cpu.saturating_sub(before.waiting_for_cpu);
            add(&self.write_on_cpu_ns, on_cpu);
            add(&self.write_waiting_for_cpu_ns, waiting);
        }
    }

    pub fn note_read(&self, since: Instant) {
        add(&self.read_ns, since.elapsed().as_nanos() as u64);
    }

    /// One buffer done: `busy_since` is when the worker took it, `born` when
    /// the worker started.
    pub fn note_buffer(&self, busy_since: Instant, born: Instant) {
        add(&self.busy_ns, busy_since.elapsed().as_nanos() as u64);
        self.alive_ns
            .store(born.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn note_waiting(&self, buffers: u64) {
        self.max_buffers_waiting
            .fetch_max(buffers, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> WorkerProfile {
        let ms = |a: &AtomicU64| a.load(Ordering::Relaxed) / 1_000_000;
        // The scheduler's clock and the wall clock differ by a little: keep
        // the three parts of the writing time adding up to it.
        let write_ms = ms(&self.write_ns);
        let on_cpu_ms = ms(&self.write_on_cpu_ns).min(write_ms);
        let waiting_ms = ms(&self.write_waiting_for_cpu_ns).min(write_ms - on_cpu_ms);
        WorkerProfile {
            alive_ms: ms(&self.alive_ns),
            busy_ms: ms(&self.busy_ns),
            write_ms,
            write_on_cpu_ms: on_cpu_ms,
            write_waiting_for_cpu_ms: waiting_ms,
            write_blocked_ms: write_ms.saturating_sub(on_cpu_ms + waiting_ms),
            read_ms: ms(&self.read_ns),
            max_buffers_waiting: self.max_buffers_waiting.load(Ordering::Relaxed),
        }
    }
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

/// Where the worker's time went, in ms (see `cupmon stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerProfile {
    /// From the worker's start to its last buffer.
    pub alive_ms: u64,
    /// Handling buffers (the rest of `alive_ms` it waited for them).
    pub busy_ms: u64,
    /// Writing names and chunks to the dump ...
    pub write_ms: u64,
    /// ... of which on a CPU (copying into the page cache) ...
    pub write_on_cpu_ms: u64,
    /// ... waiting for a CPU (the machine is busy) ...
    pub write_waiting_for_cpu_ms: u64,
    /// ... and blocked in the kernel: the disk, or writeback throttling.
    pub write_blocked_ms: u64,
    /// Reading records: names, counts, window records, other CUPTI clients.
    pub read_ms: u64,
    /// The most buffers that were waiting for the worker at once.
    pub max_buffers_waiting: u64,
}

impl MetaEntry for WorkerProfile {
    const KEY: &'static str = "worker";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_moves_with_work() {
        let Some(before) = ThreadTimes::now() else {
            return; // a kernel without schedstat: nothing to check
        };
        // Spin until the thread has had 10 ms on a CPU: on a loaded machine that can
        // take far longer than 10 ms of wall time, so the bound is generous.
        let start = Instant::now();
        let mut x = 0u64;
        let mut after = before;
        while after.on_cpu - before.on_cpu < 10_000_000 && start.elapsed().as_secs() < 20 {
            for _ in 0..100_000 {
                x = x.wrapping_mul(31).wrapping_add(7);
            }
            after = ThreadTimes::now().expect("schedstat was readable a moment ago");
        }
        std::hint::black_box(x);
        assert!(
            after.on_cpu - before.on_cpu >= 10_000_000,
            "{before:?} {after:?}"
        );
    }

    #[test]
    fn blocked_time_is_what_is_neither_on_nor_waiting_for_a_cpu() {
        let times = WorkerTimes::default();
        times.write_ns.store(50_000_000, Ordering::Relaxed);
        times.write_on_cpu_ns.store(12_000_000, Ordering::Relaxed);
        times
            .write_waiting_for_cpu_ns
            .store(8_000_000, Ordering::Relaxed);
        times.note_waiting(3);
        times.note_waiting(2);
        let p = times.snapshot();
        assert_eq!((p.write_ms, p.write_blocked_ms), (50, 30));
        assert_eq!(p.max_buffers_waiting, 3);
    }
}
