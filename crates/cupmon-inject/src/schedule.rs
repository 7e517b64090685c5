//! `CUPMON_WINDOW_AT` / `CUPMON_WINDOW_FOR`: one trace window at a set time.

use std::time::Duration;

use cupmon_monitor::MonitorConfig;

/// The scheduled window of a session's settings, if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Schedule(Option<(Duration, Duration)>);

impl Schedule {
    pub(crate) fn of(config: &MonitorConfig) -> Self {
        Self(config.window_at.zip(config.window_for))
    }

    pub(crate) fn start(self) {
        let Some((at, length)) = self.0 else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("cupmon-window".into())
            .spawn(move || run(at, length));
        if let Err(e) = spawned {
            cupmon_log::warn!("no scheduled window: {e}");
        }
    }
}

fn run(at: Duration, length: Duration) {
    let _ = std::panic::catch_unwind(|| {
        let uptime = crate::session::with(|s| Ok(s.monitor.uptime())).unwrap_or_default();
        std::thread::sleep(at.saturating_sub(uptime));
        if let Err(e) = crate::session::with(|s| s.open_window("a schedule", None).map(drop)) {
            cupmon_log::warn!("scheduled window not opened: {e}");
            return;
        }
        std::thread::sleep(length);
        // At exit the window is closed (and written) by the exit flush instead.
        if let Err(e) = crate::session::end_window_to_files() {
            cupmon_log::warn!("scheduled window: {e}");
        }
    });
}
