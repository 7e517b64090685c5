//! Flushing at process exit: everything recorded reaches the dump, whether the
//! program ends through `exit` (the atexit hook) or through `_exit` / `_Exit`
//! (Python's `os._exit`, multiprocessing workers, some launchers), which skip
//! atexit hooks: `exit_hooks.rs` interposes those and calls
//! [`flush_before_exit`] first.
//!
//! `_exit` may be called from a signal handler, from a child made by `fork`, or
//! from inside the stop itself (a CUPTI client's callback), so the hook does only
//! async-signal-safe work: it hands the stop to a thread of its own through a
//! pipe and waits for it, at most [`EXIT_FLUSH_LIMIT`].

use std::panic::catch_unwind;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};
use std::sync::Once;
use std::time::Duration;

/// How long `_exit` waits for the stop before it ends the process anyway.
pub(crate) const EXIT_FLUSH_LIMIT: Duration = Duration::from_secs(5);
// The warning says "5 s" (it is written without formatting, which allocates).
const _: () = assert!(EXIT_FLUSH_LIMIT.as_secs() == 5);

/// The write end of the pipe to the exit thread (-1: not started).
static REQUEST: AtomicI32 = AtomicI32::new(-1);

/// Where the stop at `_exit` is: not asked, asked, done.
static STATE: AtomicU8 = AtomicU8::new(IDLE);
const IDLE: u8 = 0;
const ASKED: u8 = 1;
const DONE: u8 = 2;

fn stop(when: &str) {
    let _ = catch_unwind(|| {
        if let Some(Err(e)) = crate::session::stop() {
            cupmon_log::warn!("{when}: {e}");
        }
    });
}

extern "C" fn at_exit() {
    // A child made by `fork` inherits this hook, not the session's threads.
    if crate::owner::is_owner() {
        stop("at exit");
    }
}

/// Register the exit hook and start the thread that stops the session at
/// `_exit`, once.
pub(crate) fn flush_at_exit() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: `at_exit` is a plain `extern "C" fn()` that never unwinds.
        let rc = unsafe { libc::atexit(at_exit) };
        if rc != 0 {
            cupmon_log::warn!("cannot register the exit flush; the last second may be lost");
        }
        crate::exit_hooks::resolve();
        start_exit_thread();
    });
}

fn start_exit_thread() {
    let mut fds = [-1; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        cupmon_log::warn!(
            "no flush at _exit (pipe failed); records since the last flush would be lost there"
        );
        return;
    }
    let read_fd = fds[0];
    let spawned = std::thread::Builder::new()
        .name("cupmon-exit".into())
        .spawn(move || wait_for_exit(read_fd));
    match spawned {
        Ok(_) => REQUEST.store(fds[1], Ordering::SeqCst),
        Err(e) => cupmon_log::warn!("no flush at _exit: {e}"),
    }
}

/// The exit thread: sleeps until `_exit` asks, then stops the session.
fn wait_for_exit(fd: libc::c_int) {
    loop {
        let mut byte = 0u8;
        // SAFETY: reading one byte into a valid 1-byte buffer.
        let n = unsafe { libc::read(fd, std::ptr::addr_of_mut!(byte).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return;
    }
    stop("at _exit");
    STATE.store(DONE, Ordering::SeqCst);
}

/// Stop the session before `_exit` ends the process: once, on the exit thread,
/// waiting at most [`EXIT_FLUSH_LIMIT`] (then a warning). Returns at once where
/// there is nothing to do or it cannot be done: no session armed, a child made by
/// `fork`, or a call from inside the stop. Async-signal-safe: atomics, getpid,
/// gettid, write, clock_gettime and nanosleep only.
pub(crate) fn flush_before_exit() {
    let fd = REQUEST.load(Ordering::SeqCst);
    if fd < 0 || !crate::owner::is_owner() || crate::session::stopping_here() {
        return;
    }
    if STATE
        .compare_exchange(IDLE, ASKED, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        let byte = 1u8;
        // SAFETY: write(2) of one byte from a valid buffer; async-signal-safe.
        if unsafe { libc::write(fd, std::ptr::addr_of!(byte).cast(), 1) } != 1 {
            // No stop will come: later callers must not wait for one either.
            STATE.store(DONE, Ordering::SeqCst);
            return;
        }
    }
    // A second thread's `_exit` waits too: ending the process now would cut the stop.
    let deadline = now_ns().saturating_add(EXIT_FLUSH_LIMIT.as_nanos() as u64);
    while STATE.load(Ordering::SeqCst) != DONE {
        if now_ns() >= deadline {
            say(
                b"cupmon: warning: the flush at _exit did not end within 5 s; exiting without it \
                  (the dump ends at the last complete chunk)\n",
            );
            return;
        }
        let pause = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: nanosleep with a valid timespec and no remainder; async-signal-safe.
        unsafe { libc::nanosleep(&pause, std::ptr::null_mut()) };
    }
}

/// CLOCK_MONOTONIC in ns, with clock_gettime(2) (async-signal-safe).
fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64
}

/// A message to stderr with write(2) (no lock, no allocation).
fn say(message: &[u8]) {
    // SAFETY: write(2) from a valid buffer of that length.
    unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
}
