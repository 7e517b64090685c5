//! The thread that calls CUPTI's periodic flush. Kept apart from the flush timer: on
//! the H200 a `cuptiActivityFlushAll` took up to 40 s under sustained launches, and
//! the watches that notice CUPTI stalling must go on meanwhile. While a flush runs,
//! the next period's is skipped (counted), or with `CUPMON_FLUSH_OVERLAP=1` called
//! anyway from a thread of its own.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cupmon_cupti::FlushFlag;

use crate::flusher::SlowFlushWatch;
use crate::shared::Shared;
use crate::MonitorError;

/// Flushes in flight at once, at most, with overlap allowed.
const MAX_OVERLAPPING: u32 = 4;

#[derive(Debug)]
pub(crate) struct FlushCaller {
    thread: JoinHandle<()>,
    handle: Handle,
}

/// What the flush timer holds to ask for flushes.
#[derive(Debug, Clone)]
pub(crate) struct Handle {
    requests: Sender<()>,
    state: Arc<CallState>,
}

#[derive(Debug, Default)]
struct CallState {
    busy: AtomicBool,
    overlapping: AtomicU32,
    /// Flushes finished so far, and its condvar.
    done: Mutex<u64>,
    finished: Condvar,
    slow: Mutex<Option<SlowFlushWatch>>,
}

impl FlushCaller {
    pub fn spawn(shared: &'static Shared) -> Result<Self, MonitorError> {
        let (requests, rx) = mpsc::channel::<()>();
        let state = Arc::new(CallState {
            slow: Mutex::new(Some(SlowFlushWatch::new(shared.config.flush_period))),
            ..CallState::default()
        });
        let theirs = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("cupmon-flush-call".into())
            .spawn(move || {
                while rx.recv().is_ok() {
                    theirs.flush(shared);
                    theirs.busy.store(false, Ordering::Release);
                }
            })
            .map_err(|e| MonitorError::Worker(e.to_string()))?;
        Ok(Self {
            thread,
            handle: Handle { requests, state },
        })
    }

    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// Waits for the flush in progress, then ends the thread.
    pub fn stop(self) {
        drop(self.handle);
        let _ = self.thread.join();
    }
}

impl CallState {
    fn flush(&self, shared: &Shared) {
        let since = Instant::now();
        if let Err(e) = shared.cupti.flush_all(FlushFlag::NONE) {
            cupmon_log::warn!("periodic flush: {e}");
        }
        if let Some(slow) = self.slow.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            slow.note(shared, since.elapsed());
        }
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.finished.notify_all();
    }
}

impl Handle {
    /// The period's flush: started on the caller thread when it is free, else skipped
    /// or (overlap allowed) started on a thread of its own; then waits up to `wait`
    /// for it to return, so the watches see what it brought back.
    pub fn request(&self, shared: &'static Shared, wait: Duration) {
        let state = &self.state;
        let before = *state.done.lock().unwrap_or_else(|p| p.into_inner());
        if !state.busy.swap(true, Ordering::AcqRel) {
            if self.requests.send(()).is_err() {
                state.busy.store(false, Ordering::Release);
                return;
            }
        } else if shared.config.flush_overlap
            && state.overlapping.fetch_add(1, Ordering::AcqRel) < MAX_OVERLAPPING
        {
            let theirs = Arc::clone(state);
            let spawned = std::thread::Builder::new()
                .name("cupmon-flush-extra".into())
                .spawn(move || {
                    theirs.flush(shared);
                    theirs.overlapping.fetch_sub(1, Ordering::AcqRel);
                });
            if spawned.is_err() {
                state.overlapping.fetch_sub(1, Ordering::AcqRel);
            }
        } else {
            if shared.config.flush_overlap {
                state.overlapping.fetch_sub(1, Ordering::AcqRel);
            }
            shared.counters.add(&shared.counters.flushes_skipped, 1);
            return;
        }
        let done = state.done.lock().unwrap_or_else(|p| p.into_inner());
        let _ = state
            .finished
            .wait_timeout_while(done, wait, |done| *done == before)
            .unwrap_or_else(|p| p.into_inner());
    }
}
