//! The process that started the session. A child made by `fork` gets a copy of
//! the session's memory (the session itself, the atexit hook, the signal handlers,
//! the pipes of cupmon's threads) but none of those threads, and any lock one of
//! them held stays locked in it: it must never stop, flush or signal the parent's
//! session. These checks, made before any lock is taken, are how it knows.

use std::sync::atomic::{AtomicI32, Ordering};

static OWNER: AtomicI32 = AtomicI32::new(0);

/// This process owns the session that is starting.
pub(crate) fn claim() {
    // SAFETY: getpid(2) has no preconditions.
    OWNER.store(unsafe { libc::getpid() }, Ordering::SeqCst);
}

/// Whether this process started the session (false in a child made by `fork`,
/// and before any session). Async-signal-safe: an atomic load and getpid(2).
pub(crate) fn is_owner() -> bool {
    let owner = OWNER.load(Ordering::SeqCst);
    // SAFETY: getpid(2) has no preconditions.
    owner != 0 && owner == unsafe { libc::getpid() }
}

/// The calling thread's kernel id. Async-signal-safe (gettid(2)), unlike
/// `std::thread::current()`, which may allocate.
pub(crate) fn thread_id() -> libc::pid_t {
    // SAFETY: gettid(2) has no preconditions.
    unsafe { libc::gettid() }
}
