//! Panics of cupmon's own code inside the traced program. Every entry point catches
//! them (CUPTI callbacks, the C ABI, cupmon's threads), but Rust's default hook would
//! still print a message and a backtrace hint into the program's stderr. This library
//! has its own copy of the standard library, so its hook sees only cupmon's panics:
//! it turns each into one `cupmon: error:` line (with the backtrace at
//! `CUPMON_LOG=debug`).

use std::sync::Once;

/// Install the hook (once per process).
pub(crate) fn quiet_in_callbacks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let place = info
                .location()
                .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
            let what = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            cupmon_log::error!(
                "internal error{place}: {what} (cupmon caught it; the program goes on)"
            );
            if cupmon_log::enabled(cupmon_log::Level::Debug) {
                cupmon_log::debug!("{}", std::backtrace::Backtrace::force_capture());
            }
        }));
    });
}
