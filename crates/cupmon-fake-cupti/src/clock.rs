//! Timestamps and thread ids as CUPTI reports them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cupti_types::ThreadIdType;

extern "C" {
    // glibc 2.30+; declared here rather than pulling in a libc binding crate.
    fn gettid() -> i32;
    fn pthread_self() -> usize;
}

/// CUPTI's default clock: CLOCK_REALTIME in ns. Strictly increasing here, so
/// records made back to back never share a timestamp.
pub(crate) fn now() -> u64 {
    static LAST: AtomicU64 = AtomicU64::new(0);
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let previous = LAST.fetch_max(wall, Ordering::Relaxed);
    if wall > previous {
        wall
    } else {
        LAST.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// The calling thread's id as an API record carries it: the OS thread id for
/// SYSTEM, otherwise `pthread_self` truncated (CUPTI's opaque default).
pub(crate) fn thread_id(kind: u32) -> u32 {
    if kind == ThreadIdType::SYSTEM.0 {
        // SAFETY: gettid has no preconditions.
        unsafe { gettid() as u32 }
    } else {
        // SAFETY: pthread_self has no preconditions.
        unsafe { pthread_self() as u32 }
    }
}
