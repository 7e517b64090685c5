//! Timestamps and thread ids as CUPTI reports them.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cupti_types::ThreadIdType;

extern "C" {
    // glibc 2.30+; declared here rather than pulling in a libc binding crate.
    fn gettid() -> i32;
    fn pthread_self() -> usize;
}

/// A client's timestamp callback (`cuptiActivityRegisterTimestampCallback`), as the
/// address of an `extern "C" fn() -> u64`; 0 for CUPTI's own clock.
static CALLBACK: AtomicUsize = AtomicUsize::new(0);

/// Make `callback` the clock of every timestamp from now on (`None`: CUPTI's own).
pub(crate) fn set_callback(callback: Option<extern "C" fn() -> u64>) {
    CALLBACK.store(callback.map_or(0, |f| f as usize), Ordering::Relaxed);
}

/// The time of a record or of `cuptiGetTimestamp`: the registered callback's, as
/// CUPTI does once a client registered one, else CUPTI's default clock.
pub(crate) fn now() -> u64 {
    let callback = CALLBACK.load(Ordering::Relaxed);
    if callback != 0 {
        // SAFETY: the value was stored from an `extern "C" fn() -> u64` by
        // `set_callback`; a client's callback must stay valid while registered, as
        // with CUPTI.
        let f: extern "C" fn() -> u64 = unsafe { std::mem::transmute(callback) };
        return f();
    }
    realtime()
}

/// CUPTI's default clock: CLOCK_REALTIME in ns. Strictly increasing here, so
/// records made back to back never share a timestamp.
fn realtime() -> u64 {
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
