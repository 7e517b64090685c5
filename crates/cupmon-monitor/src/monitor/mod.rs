//! A monitoring session: CUPTI set up, the worker and the flush timer running
//! (this file: the monitor and its lifecycle), trace windows (`windows.rs`),
//! annotations (`annotations.rs`) and what it reports (`reporting.rs`) on request.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cupmon_cupti::{callback_stats, ActivityKind, Cupti, FlushFlag, ThreadIdType};
use cupmon_records::dump::AnnotationLog;
use cupmon_window::TraceWindow;

use crate::flusher::Flusher;
use crate::launch_ledger::Ledger;
use crate::meta::session_meta;
use crate::msg::Msg;
use crate::shared::Shared;
use crate::stats::MonitorStats;
use crate::worker::Worker;
use crate::MonitorConfig;
use crate::{MonitorError, StateError};

/// CUSTOM1 ids cupmon pushes start here, far from the small ids Kineto and
/// applications use for their own annotations.
const ANNOTATION_ID_BASE: u64 = 0x6375_0000_0000_0000;

mod annotations;
mod cpu_ranges;
pub use cpu_ranges::{range_clock_ns, RangeAttributes, RangeCategory, RangeStart};
mod reporting;
mod windows;

#[derive(Debug)]
pub(crate) enum WindowPhase {
    Idle,
    /// Window kinds enabled; records are not kept yet.
    Prepared {
        enabled: Vec<ActivityKind>,
    },
    Open {
        enabled: Vec<ActivityKind>,
        start_ns: u64,
    },
}

/// The dump's `user_annotations.jsonl`, opened at the first annotation.
#[derive(Debug)]
pub(crate) enum AnnotationLogState {
    Closed,
    Open(AnnotationLog),
    /// Opening or writing failed (warned once): names stay in windows only.
    Failed,
}

/// The live monitor of this process. One at a time: CUPTI has one set of
/// activity callbacks per process.
pub struct Monitor {
    shared: &'static Shared,
    worker: Mutex<Option<JoinHandle<()>>>,
    flusher: Mutex<Option<Flusher>>,
    window: Mutex<WindowPhase>,
    /// The names of open annotations and of those a window needs (not every name
    /// ever pushed: NVTX ranges are pushed all the time; the dump's log has them all).
    annotations: Mutex<annotations::AnnotationNames>,
    /// Open annotations per thread: CUPTI's external-id stacks are per thread.
    annotation_stacks: Mutex<std::collections::HashMap<std::thread::ThreadId, Vec<u64>>>,
    next_annotation: AtomicU64,
    /// A window is prepared or open: NVTX marks are kept (`cpu_ranges.rs`).
    ranges_wanted: AtomicBool,
    annotation_log: Mutex<AnnotationLogState>,
    started: Instant,
    devices: std::sync::OnceLock<serde_json::Value>,
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor")
            .field("dump_dir", &self.shared.config.dump_dir)
            .finish_non_exhaustive()
    }
}

/// Whether the session's always-on kinds link launches to annotations.
fn config_kinds_link_annotations(config: &MonitorConfig) -> bool {
    config.kinds.contains(&ActivityKind::EXTERNAL_CORRELATION)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Monitor {
    /// Load CUPTI (checking for the driver first), create the dump directory,
    /// register the buffer callbacks and enable the always-on kinds.
    pub fn start(config: MonitorConfig) -> Result<Self, MonitorError> {
        config.validate()?;
        let cupti = Cupti::load_preferring(config.libcupti.as_deref())?;
        Self::start_with(cupti, config)
    }

    /// [`Monitor::start`] with a CUPTI already loaded.
    pub fn start_with(cupti: &'static Cupti, config: MonitorConfig) -> Result<Self, MonitorError> {
        config.validate()?;
        let mut meta = session_meta(cupti, &config)?;
        let dump = crate::dump_layout::create_dump(&config, &mut meta)?;
        // Every rewrite of the meta keeps the id the segments carry.
        if let Some(id) = dump.dump_id() {
            meta.set("dump_id", id.to_string());
        }
        let (tx, rx) = mpsc::channel();
        let shared: &'static Shared = Box::leak(Box::new(Shared::new(cupti, config, tx, meta)));
        let mut dump = dump;
        // Each segment's digest gets the launch counter at its open and close: read
        // at the roll, nothing on the launch path.
        dump.count_launches_with(cupmon_records::dump::LaunchProbe(Box::new(|| {
            lock(&shared.ledger).launched().map(|n| n.kernels)
        })));
        let worker = Worker::new(shared, dump);
        let worker = std::thread::Builder::new()
            .name("cupmon-worker".into())
            .spawn(move || worker.run(rx))
            .map_err(|e| MonitorError::Worker(e.to_string()))?;
        // The pool must hold buffers before CUPTI asks for the first one.
        shared.pool.refill();
        let monitor = Monitor {
            shared,
            worker: Mutex::new(Some(worker)),
            flusher: Mutex::new(None),
            window: Mutex::new(WindowPhase::Idle),
            annotations: Mutex::new(annotations::AnnotationNames::new(
                config_kinds_link_annotations(&shared.config),
            )),
            annotation_stacks: Mutex::new(std::collections::HashMap::new()),
            next_annotation: AtomicU64::new(ANNOTATION_ID_BASE),
            ranges_wanted: AtomicBool::new(false),
            annotation_log: Mutex::new(AnnotationLogState::Closed),
            started: Instant::now(),
            devices: std::sync::OnceLock::new(),
        };
        cupti.set_thread_id_type(ThreadIdType::SYSTEM)?;
        let settings = crate::cupti_settings::apply(cupti, &shared.config);
        shared.write_meta(|meta| {
            if let Some(settings) = settings {
                meta.set("cupti_settings", settings);
            }
        });
        // Counting starts before the kinds are on: a launch in between is counted and
        // not recorded (a false alarm) rather than recorded and not counted (which
        // could hide a loss of the same size).
        *lock(&shared.ledger) = Ledger::start(cupti, shared.config.count_launches);
        let stacks = crate::launch_stacks::start(shared);
        shared.write_meta(|meta| {
            meta.set("python_stacks", stacks);
            meta.set("python_stack_depth", shared.config.python_stack_depth);
        });
        cupti.register_callbacks(shared)?;
        for &kind in &shared.config.kinds {
            cupti.enable(kind)?;
        }
        *lock(&monitor.flusher) = Some(Flusher::spawn(shared)?);
        Ok(monitor)
    }

    /// Note each launch's Python stack from now on (`on`), or stop noting them (a hot
    /// loop run without attribution); returns whether they were noted. Launches made
    /// while off are counted as unattributed. Refused, saying why, where they cannot
    /// be noted (launches not counted, no CPython 3.11-3.13 in the process).
    pub fn python_stacks(&self, on: bool) -> Result<bool, MonitorError> {
        if lock(&self.worker).is_none() {
            return Err(StateError::Stopped.into());
        }
        Ok(crate::launch_stacks::switch(self.shared, on)?)
    }

    /// Hand every buffer to `observer` too (after writing it), from now on.
    pub fn set_observer(&self, observer: std::sync::Arc<dyn crate::BufferObserver>) {
        *self
            .shared
            .observer
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }

    /// Take CUPTI's activity callbacks back (after another client in the
    /// process registered its own) and turn cupmon's kinds on again. Buffers
    /// CUPTI completed while the other client held the callbacks went to it;
    /// those that never come back are counted as lost when the session stops.
    /// Returns how many of cupmon's buffers CUPTI holds now.
    pub fn rearm(&self) -> Result<u64, MonitorError> {
        self.shared.cupti.register_callbacks(self.shared)?;
        self.shared.cupti.reenable_all()?;
        Ok(callback_stats().outstanding_buffers)
    }

    pub fn config(&self) -> &MonitorConfig {
        &self.shared.config
    }

    /// The dump's disk budget (`--keep`, or the default worked out at the start).
    pub fn budget_bytes(&self) -> Option<u64> {
        lock(&self.shared.meta).json().get("keep_bytes")?.as_u64()
    }

    pub fn cupti(&self) -> &'static Cupti {
        self.shared.cupti
    }

    /// Time since the session started.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Wait until the worker has handled everything queued so far.
    fn barrier(&self) -> Result<(), MonitorError> {
        let (tx, rx) = mpsc::sync_channel(1);
        if !self.shared.send(Msg::Barrier(tx)) {
            return Err(MonitorError::Worker("it is not running".into()));
        }
        rx.recv()
            .map_err(|_| MonitorError::Worker("it exited".into()))
    }

    /// Hand CUPTI's completed buffers to the worker and wait until they are
    /// written. `forced` also returns buffers with unfinished kernels (their
    /// end time is then 0).
    pub fn flush(&self, forced: bool) -> Result<(), MonitorError> {
        let cupti = self.shared.cupti;
        cupti.flush_all(FlushFlag::NONE)?;
        self.barrier()?;
        if forced {
            cupti.flush_all(FlushFlag::FORCED)?;
            self.barrier()?;
        }
        Ok(())
    }

    /// Write a hang record into the dump now (after a forced flush): the work in
    /// flight per stream, the last completed operations, the launching threads and
    /// the NCCL collectives. Returns its path.
    pub fn write_hang_record(
        &self,
        trigger: cupmon_hang::Trigger,
        detail: &str,
    ) -> Result<std::path::PathBuf, MonitorError> {
        crate::hang_watch::write(self.shared, trigger, detail.to_owned())
            .map_err(MonitorError::Worker)
    }

    /// End the session: close an open window (returned), disable collection,
    /// flush everything (plain, then forced), write the meta and close the
    /// dump. Never calls `cuptiFinalize`.
    ///
    /// Takes `&self` so that a monitor shared between threads can be stopped
    /// by one of them; a second call is an error.
    pub fn stop(&self) -> Result<(MonitorStats, Option<TraceWindow>), MonitorError> {
        if lock(&self.worker).is_none() {
            return Err(StateError::Stopped.into());
        }
        self.stop_flusher();
        let window = if self.window_open() {
            Some(self.end_window()?)
        } else {
            None
        };
        if let WindowPhase::Prepared { enabled } =
            std::mem::replace(&mut *lock(&self.window), WindowPhase::Idle)
        {
            self.ranges_wanted
                .store(false, std::sync::atomic::Ordering::Relaxed);
            for kind in enabled {
                let _ = self.shared.cupti.disable(kind);
            }
        }
        let flushed = self.flush(true);
        for &kind in self.shared.config.kinds.iter().rev() {
            let _ = self.shared.cupti.disable(kind);
        }
        // Launches from now on are not recorded, so not the session's.
        lock(&self.shared.ledger).freeze(self.shared.cupti);
        crate::launch_stacks::stop();
        let _ = self.shared.cupti.flush_all(FlushFlag::FORCED);
        // After a forced flush CUPTI holds nothing of cupmon's: what it still
        // holds went to another client and will not come back.
        let lost = callback_stats().outstanding_buffers;
        if lost > 0 {
            self.shared
                .counters
                .add(&self.shared.counters.buffers_lost, lost);
            cupmon_log::warn!(
                "{lost} buffers of records went to another CUPTI client in this process and are \
                 lost (run under `cupmon run` so that cupmon shares CUPTI)"
            );
        }
        let (tx, rx) = mpsc::sync_channel(1);
        self.shared.send(Msg::Stop(tx));
        let write_error = rx.recv().ok().flatten();
        self.shared.close_queue();
        let worker = lock(&self.worker).take();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
        // Last, once every buffer is in the file: a kill before this leaves the session
        // open in the meta, and readers know its counts are not final.
        self.close_meta();
        self.shared.pool.drain();
        let mut stats = self.stats();
        stats.running = false;
        flushed?;
        if let Some(e) = write_error {
            return Err(MonitorError::Worker(format!(
                "writing the dump failed: {e}"
            )));
        }
        Ok((stats, window))
    }

    fn stop_flusher(&self) {
        let flusher = lock(&self.flusher).take();
        if let Some(flusher) = flusher {
            flusher.stop();
        }
    }
}
