//! The periodic flush that keeps the dump about one period behind: CUPTI
//! hands over full buffers by itself, but a partly filled one only when asked.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use cupmon_cupti::FlushFlag;

use crate::shared::Shared;
use crate::MonitorError;

#[derive(Debug)]
pub(crate) struct Flusher {
    handle: JoinHandle<()>,
    /// Set to true to stop; the condvar wakes the thread early.
    stop: Arc<(Mutex<bool>, Condvar)>,
}

impl Flusher {
    pub fn spawn(shared: &'static Shared) -> Result<Self, MonitorError> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let theirs = Arc::clone(&stop);
        let period = shared.config.flush_period;
        let handle = std::thread::Builder::new()
            .name("cupmon-flush".into())
            .spawn(move || {
                let (flag, cv) = &*theirs;
                let mut stopped = flag.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    let (guard, _) = cv
                        .wait_timeout(stopped, period)
                        .unwrap_or_else(|p| p.into_inner());
                    stopped = guard;
                    if *stopped {
                        return;
                    }
                    if let Err(e) = shared.cupti.flush_all(FlushFlag::NONE) {
                        eprintln!("cupmon: warning: periodic flush: {e}");
                    }
                }
            })
            .map_err(|e| MonitorError::Worker(e.to_string()))?;
        Ok(Self { handle, stop })
    }

    pub fn stop(self) {
        let (flag, cv) = &*self.stop;
        *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
        let _ = self.handle.join();
    }
}
