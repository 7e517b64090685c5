//! `InitializeInjection`: where the CUDA driver hands control to cupmon.

use std::panic::catch_unwind;

use cupmon_monitor::env_vars;

/// Called by the CUDA driver during `cuInit` when `CUDA_INJECTION64_PATH`
/// names this library. Returns 1 (success) even when cupmon cannot start, so
/// that the program runs on unmonitored; the reason goes to stderr.
#[no_mangle]
pub extern "C" fn InitializeInjection() -> libc::c_int {
    let started = catch_unwind(|| {
        if std::env::var(env_vars::ENABLE).is_ok_and(|v| v == "0") {
            return;
        }
        let result = crate::session::config_from_env()
            .and_then(|config| crate::session::start(config, true));
        match result {
            Ok(()) => {
                crate::exit::flush_at_exit();
                crate::signals::install_from_env();
                crate::schedule::start_from_env();
            }
            Err(e) => eprintln!("cupmon: not monitoring this process: {e}"),
        }
    });
    if started.is_err() {
        eprintln!("cupmon: internal error while starting; not monitoring this process");
    }
    1
}
