//! Flushing at process exit: everything recorded reaches the dump.

use std::panic::catch_unwind;
use std::sync::Once;

extern "C" fn at_exit() {
    let _ = catch_unwind(|| {
        if let Some(Err(e)) = crate::session::stop() {
            cupmon_log::warn!("at exit: {e}");
        }
    });
}

/// Register the exit hook once.
pub(crate) fn flush_at_exit() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: `at_exit` is a plain `extern "C" fn()` that never unwinds.
        let rc = unsafe { libc::atexit(at_exit) };
        if rc != 0 {
            cupmon_log::warn!("cannot register the exit flush; the last second may be lost");
        }
    });
}
