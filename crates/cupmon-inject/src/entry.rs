//! `InitializeInjection`: where the CUDA driver hands control to cupmon.

use std::panic::catch_unwind;
use std::path::Path;

/// Called by the CUDA driver during `cuInit` when `CUDA_INJECTION64_PATH`
/// names this library. Returns 1 (success) even when cupmon cannot start, so
/// that the program runs on unmonitored; the reason goes to stderr and to the
/// status file of a dump directory of its own, where `cupmon run` finds it.
#[no_mangle]
pub extern "C" fn InitializeInjection() -> libc::c_int {
    crate::panics::quiet_in_callbacks();
    let started = catch_unwind(|| {
        let mut config = match crate::session::config_from_env() {
            Ok(config) if !config.enable => return,
            Ok(config) => config,
            Err(e) => return refuse(&crate::session::output_dir_from_env(), &e.to_string()),
        };
        cupmon_log::set_level(config.log);
        config.dump_dir = match crate::session::new_dump_dir(&config.output_dir) {
            Ok(dir) => dir,
            Err(e) => {
                cupmon_log::error!("not monitoring this process: {e}");
                return;
            }
        };
        let (dir, window) = (
            config.dump_dir.clone(),
            crate::schedule::Schedule::of(&config),
        );
        let on_signal = config.window_on_signal;
        match crate::session::start(config, true) {
            Ok(()) => {
                crate::exit::flush_at_exit();
                crate::signals::install_handlers(on_signal);
                window.start();
            }
            Err(e) => refuse_in(&dir, &e.to_string()),
        }
    });
    if started.is_err() {
        cupmon_log::error!("internal error while starting; not monitoring this process");
    }
    1
}

/// Say why this process is not monitored, on stderr and in a new dump directory
/// under `output`.
fn refuse(output: &Path, why: &str) {
    match crate::session::new_dump_dir(output) {
        Ok(dir) => refuse_in(&dir, why),
        Err(e) => {
            cupmon_log::error!("not monitoring this process: {why}");
            cupmon_log::warn!("cannot write the reason down: {e}");
        }
    }
}

/// Say why this process is not monitored, on stderr and in its dump directory `dir`.
fn refuse_in(dir: &Path, why: &str) {
    cupmon_log::error!("not monitoring this process: {why}");
    let run = std::env::var(cupmon_config::env_vars::RUN_ID).ok();
    if let Err(write) = cupmon_records::dump::write_refusal(dir, why, run.as_deref()) {
        cupmon_log::warn!("cannot write the reason into {}: {write}", dir.display());
    }
}
