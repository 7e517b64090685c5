//! `CUPMON_WINDOW_AT` / `CUPMON_WINDOW_FOR`: one trace window at a set time.

use std::time::Duration;

use cupmon_monitor::{env_vars, parse_seconds};

pub(crate) fn start_from_env() {
    let read = |name: &str| std::env::var(name).ok().map(|v| parse_seconds(name, &v));
    let (at, length) = match (read(env_vars::WINDOW_AT), read(env_vars::WINDOW_FOR)) {
        (Some(Ok(at)), Some(Ok(length))) => (at, length),
        (None, None) => return,
        (Some(Err(e)), _) | (_, Some(Err(e))) => {
            eprintln!("cupmon: no scheduled window: {e}");
            return;
        }
        _ => {
            eprintln!(
                "cupmon: no scheduled window: set both {} and {}",
                env_vars::WINDOW_AT,
                env_vars::WINDOW_FOR
            );
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("cupmon-window".into())
        .spawn(move || run(at, length));
    if let Err(e) = spawned {
        eprintln!("cupmon: no scheduled window: {e}");
    }
}

fn run(at: Duration, length: Duration) {
    let _ = std::panic::catch_unwind(|| {
        let uptime = crate::session::with(|s| Ok(s.monitor.uptime())).unwrap_or_default();
        std::thread::sleep(at.saturating_sub(uptime));
        if let Err(e) = crate::session::with(|s| s.monitor.start_window().map(drop)) {
            eprintln!("cupmon: scheduled window not opened: {e}");
            return;
        }
        std::thread::sleep(length);
        // At exit the window is closed (and written) by the exit flush instead.
        if let Err(e) = crate::session::end_window_to_files() {
            eprintln!("cupmon: scheduled window: {e}");
        }
    });
}
