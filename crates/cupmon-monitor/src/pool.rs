//! Buffers for CUPTI, allocated ahead by the worker so that CUPTI's request
//! callback (on the application's launch path) is a pop from a free list. When
//! the list is empty under the cap the callback maps a buffer itself (one
//! mmap, counted): a request answered with no buffer loses records, and on the
//! H200 bursts lost some with buffers to spare under the cap before the worker
//! refilled the list.
//! The number of buffers in existence is capped: past the cap CUPTI gets no
//! buffer, drops records and counts them, and memory stays bounded. Below the
//! cap memory follows demand: CUPTI holds many buffers at once only in bursts
//! (it completes them in batches), and buffers beyond the reserve are freed
//! when they come back, so a burst leaves no memory behind.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use cupmon_cupti::ActivityBuffer;

/// The most memory the reserve of free buffers grows to (what it reached under the
/// former 256 MiB cap), so that a high cap does not mean more memory held idle.
const MAX_RESERVE_BYTES: usize = 64 << 20;

#[derive(Debug)]
pub(crate) struct Pool {
    free: Mutex<Vec<ActivityBuffer>>,
    buffer_size: usize,
    max_buffers: usize,
    /// Buffers allocated and not freed: free, lent to CUPTI, or queued.
    existing: AtomicUsize,
    allocated_total: AtomicU64,
    /// Requests answered with no buffer.
    refused: AtomicU64,
    /// Requests that found the free list empty and got a buffer mapped then.
    mapped_on_request: AtomicU64,
    /// How many free buffers the worker keeps ready; doubles (up to
    /// `max_reserve`) each time a request finds the list empty.
    reserve: AtomicUsize,
    max_reserve: usize,
    /// The most buffers lent to CUPTI or waiting for the worker at once.
    max_in_use: AtomicUsize,
    /// A refill has been asked for and not yet done.
    refill_asked: AtomicBool,
}

impl Pool {
    pub fn new(buffer_size: usize, max_buffers: usize, reserve: usize) -> Self {
        let reserve = reserve.clamp(1, max_buffers);
        Self {
            reserve: AtomicUsize::new(reserve),
            // Growth stops at a quarter of the cap, and at MAX_RESERVE_BYTES: the
            // reserve is memory held idle, and refills are quick (the worker is mostly
            // waiting). The cap only bounds a burst (2 GiB by default).
            max_reserve: (max_buffers / 4)
                .min(MAX_RESERVE_BYTES / buffer_size.max(1))
                .max(reserve),
            max_in_use: AtomicUsize::new(0),
            refill_asked: AtomicBool::new(false),
            free: Mutex::new(Vec::with_capacity(max_buffers)),
            buffer_size,
            max_buffers,
            existing: AtomicUsize::new(0),
            allocated_total: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            mapped_on_request: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ActivityBuffer>> {
        // A panic while holding the lock cannot leave the Vec inconsistent.
        self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A buffer for CUPTI: a free one, else a new one under the cap, else
    /// None (counted). The flag asks the caller to wake the worker for a
    /// refill (at most once until it is done).
    pub fn take(&self) -> (Option<ActivityBuffer>, bool) {
        let (popped, left) = {
            let mut free = self.lock();
            let buffer = free.pop();
            (buffer, free.len())
        };
        let buffer = popped.or_else(|| {
            // The worker did not refill in time: keep more ready from now on.
            let max = self.max_reserve;
            let _ = self
                .reserve
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                    Some((r * 2).min(max))
                });
            let mapped = self.allocate();
            let counter = if mapped.is_some() {
                &self.mapped_on_request
            } else {
                &self.refused
            };
            counter.fetch_add(1, Ordering::Relaxed);
            mapped
        });
        if buffer.is_some() {
            let in_use = self.existing.load(Ordering::Relaxed).saturating_sub(left);
            self.max_in_use.fetch_max(in_use, Ordering::Relaxed);
        }
        let low = left * 2 < self.reserve.load(Ordering::Relaxed);
        let wake = low && !self.refill_asked.swap(true, Ordering::Relaxed);
        (buffer, wake)
    }

    /// Return a buffer CUPTI is done with (after the worker wrote it); it is
    /// freed instead when the reserve is already free.
    pub fn give_back(&self, buffer: ActivityBuffer) {
        if buffer.capacity() == self.buffer_size {
            let mut free = self.lock();
            if free.len() < self.reserve.load(Ordering::Relaxed) {
                free.push(buffer);
                return;
            }
        }
        drop(buffer); // unmapped now, outside the lock
        self.existing.fetch_sub(1, Ordering::Relaxed);
    }

    /// A new buffer if the cap allows one (the slot is claimed first, so the
    /// worker and a callback cannot both take the last one).
    fn allocate(&self) -> Option<ActivityBuffer> {
        self.existing
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < self.max_buffers).then_some(n + 1)
            })
            .ok()?;
        let buffer = ActivityBuffer::try_new(self.buffer_size);
        if buffer.is_some() {
            self.allocated_total.fetch_add(1, Ordering::Relaxed);
        } else {
            self.existing.fetch_sub(1, Ordering::Relaxed);
        }
        buffer
    }

    /// Allocate until the reserve is free or the cap is reached. Runs on the
    /// worker thread.
    pub fn refill(&self) {
        self.refill_asked.store(false, Ordering::Relaxed);
        let target = self.reserve.load(Ordering::Relaxed);
        while self.lock().len() < target {
            let Some(buffer) = self.allocate() else {
                return;
            };
            self.lock().push(buffer);
        }
    }

    /// Free every buffer in the free list (at stop).
    pub fn drain(&self) {
        let freed = std::mem::take(&mut *self.lock());
        self.existing.fetch_sub(freed.len(), Ordering::Relaxed);
    }

    pub fn free_count(&self) -> usize {
        self.lock().len()
    }

    pub fn allocated_total(&self) -> u64 {
        self.allocated_total.load(Ordering::Relaxed)
    }

    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    pub fn mapped_on_request(&self) -> u64 {
        self.mapped_on_request.load(Ordering::Relaxed)
    }

    pub fn max_in_use(&self) -> usize {
        self.max_in_use.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_list_maps_a_buffer_and_doubles_the_reserve() {
        let pool = Pool::new(64 << 10, 16, 2);
        pool.refill();
        let _a = pool.take();
        let _b = pool.take();
        let (c, _) = pool.take();
        assert!(c.is_some(), "under the cap a request is never refused");
        assert_eq!((pool.mapped_on_request(), pool.refused()), (1, 0));
        pool.refill();
        assert_eq!(pool.free_count(), 4);
        assert_eq!(pool.allocated_total(), 7);
    }

    #[test]
    fn refill_respects_the_cap_and_take_counts_refusals() {
        let pool = Pool::new(64 << 10, 3, 8);
        pool.refill();
        assert_eq!(pool.free_count(), 3);
        let a = pool.take().0.expect("buffer");
        let (_b, wake) = pool.take();
        assert!(wake, "running low asks for a refill");
        let (_c, wake) = pool.take();
        assert!(!wake, "once");
        assert!(pool.take().0.is_none());
        assert_eq!(pool.refused(), 1);
        pool.refill();
        assert_eq!(pool.free_count(), 0, "all three exist, lent out");
        pool.give_back(a);
        assert_eq!(pool.free_count(), 1);
        assert_eq!(pool.allocated_total(), 3);
    }

    #[test]
    fn a_burst_leaves_only_the_reserve_behind() {
        let pool = Pool::new(64 << 10, 16, 2);
        pool.refill();
        let mut lent = Vec::new();
        // CUPTI holds ten buffers at once; the worker refills as it is asked.
        for _ in 0..10 {
            let (buffer, wake) = pool.take();
            lent.extend(buffer);
            if wake {
                pool.refill();
            }
        }
        assert_eq!(lent.len(), 10, "refills kept up");
        assert_eq!(pool.max_in_use(), 10);
        for buffer in lent {
            pool.give_back(buffer);
        }
        assert_eq!(pool.free_count(), 2, "the rest was freed on return");
        assert_eq!(pool.existing.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn the_reserve_grows_to_a_quarter_of_the_cap() {
        let pool = Pool::new(64 << 10, 16, 1);
        let mut lent = Vec::new();
        for _ in 0..8 {
            pool.refill();
            while let (Some(b), _) = pool.take() {
                lent.push(b);
            }
        }
        assert_eq!(pool.reserve.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn a_high_cap_keeps_the_idle_reserve_small() {
        // The 2 GiB default cap of 4 MiB buffers: a quarter would hold 512 MiB idle.
        let pool = Pool::new(4 << 20, 512, 1);
        assert_eq!(pool.max_reserve, 16, "64 MiB of 4 MiB buffers");
    }
}
