//! `_exit` and `_Exit`, interposed when this library is preloaded (`cupmon run`
//! preloads it; with `CUDA_INJECTION64_PATH` alone these never shadow the C
//! library's). They end the process without atexit hooks, so the records since the
//! last periodic flush were lost (7,000 of 27,000 kernels of a run on an H200):
//! each first stops the session ([`crate::exit::flush_before_exit`], bounded), then
//! calls the C library's function.
//!
//! The C library's functions are looked up (`dlsym(RTLD_NEXT)`) when the library is
//! loaded and again when a session starts, never in the hooks: dlsym is not
//! async-signal-safe, and `_exit` is called from signal handlers and `vfork`ed
//! children.

use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

type ExitFn = unsafe extern "C" fn(c_int) -> !;

/// The C library's `_exit` and `_Exit` (0: not found).
static REAL_EXIT: AtomicUsize = AtomicUsize::new(0);
static REAL_UPPER_EXIT: AtomicUsize = AtomicUsize::new(0);

fn next(name: &CStr) -> usize {
    // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name; the result is only
    // stored, and called as `ExitFn`, the signature both functions have in C.
    unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) as usize }
}

/// Find the C library's functions (where not found yet).
pub(crate) fn resolve() {
    for (slot, name) in [(&REAL_EXIT, c"_exit"), (&REAL_UPPER_EXIT, c"_Exit")] {
        if slot.load(Ordering::SeqCst) == 0 {
            slot.store(next(name), Ordering::SeqCst);
        }
    }
}

extern "C" fn resolve_at_load() {
    resolve();
}

/// Runs when the library is loaded (before `main` when preloaded).
#[used]
#[link_section = ".init_array"]
static RESOLVE_AT_LOAD: extern "C" fn() = resolve_at_load;

/// Call the C library's function at `slot` (else `fallback`'s); if neither was
/// found, end the process with the system call `_exit` makes.
fn real(slot: &AtomicUsize, fallback: &AtomicUsize, status: c_int) -> ! {
    let f = match slot.load(Ordering::SeqCst) {
        0 => fallback.load(Ordering::SeqCst),
        f => f,
    };
    if f != 0 {
        // SAFETY: `f` is the C library's `_exit` or `_Exit` (see `next`).
        let f: ExitFn = unsafe { std::mem::transmute::<usize, ExitFn>(f) };
        // SAFETY: `_exit(status)` has no preconditions.
        unsafe { f(status) }
    }
    loop {
        // SAFETY: exit_group(2) ends every thread of the process; it does not return.
        unsafe { libc::syscall(libc::SYS_exit_group, status) };
    }
}

/// `_exit(2)`: stop the session (bounded), then the C library's `_exit`.
#[no_mangle]
pub extern "C" fn _exit(status: c_int) -> ! {
    crate::exit::flush_before_exit();
    real(&REAL_EXIT, &REAL_UPPER_EXIT, status)
}

/// `_Exit(3)`: stop the session (bounded), then the C library's `_Exit`.
#[no_mangle]
#[allow(non_snake_case)]
pub extern "C" fn _Exit(status: c_int) -> ! {
    crate::exit::flush_before_exit();
    real(&REAL_UPPER_EXIT, &REAL_EXIT, status)
}
