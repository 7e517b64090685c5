//! Ctrl-C, SIGTERM or SIGHUP during a command that writes files: remove the
//! temporary files it has on disk (up to the size of the output, hidden
//! beside it) and exit with 128 + the signal's number, as a shell reports a
//! killed program. A half-done merge or decode is worth nothing, so the
//! first signal stops and cleans.
//!
//! The signals are blocked in every thread and taken by one thread with
//! sigwait: unlike the ctrlc crate's handler (which `cupmon run` uses), this
//! says which signal came, so SIGINT exits 130 and SIGTERM 143.

use nix::sys::signal::{SigSet, Signal};

/// Install the clean-up. Call first in `main`, before any thread starts, so
/// that every thread inherits the blocked signals. Not for `cupmon run`: its
/// child would inherit them too.
pub fn clean_up_on_signals() {
    let mut set = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(signal);
    }
    if let Err(e) = set.thread_block() {
        eprintln!("cupmon: warning: cannot handle Ctrl-C: {e}");
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || loop {
            let Ok(signal) = set.wait() else { continue };
            let removed = cupmon_files::remove_live_temp_files();
            let what = match removed {
                0 => String::new(),
                1 => "; removed its temporary file".to_owned(),
                n => format!("; removed its {n} temporary files"),
            };
            eprintln!("\ncupmon: interrupted by {}{what}", signal.as_str());
            std::process::exit(128 + signal as i32);
        });
    if let Err(e) = spawned {
        // Without the thread nobody takes the signals: let them kill as before.
        let _ = set.thread_unblock();
        eprintln!("cupmon: warning: cannot handle Ctrl-C: {e}");
    }
}
