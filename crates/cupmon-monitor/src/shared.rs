//! The state CUPTI's callbacks reach: the pool, the queue to the worker and
//! the counters. It lives for the rest of the process (CUPTI keeps calling
//! the registered callbacks), so a monitor leaks one per session.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use cupmon_cupti::{ActivityBuffer, ActivitySink, CompletedBuffer, Cupti};
use cupmon_records::dump::Retired;
use cupmon_records::MetaFile;

use crate::clock_log::ClockLog;
use crate::launch_ledger::Ledger;
use crate::msg::Msg;
use crate::pool::Pool;
use crate::stats::Counters;
use crate::BufferObserver;
use crate::MonitorConfig;

pub(crate) struct Shared {
    pub cupti: &'static Cupti,
    pub config: MonitorConfig,
    pub pool: Pool,
    /// To the worker; `None` once the session has stopped.
    pub queue: Mutex<Option<Sender<Msg>>>,
    pub counters: Counters,
    /// Samples of CUPTI's clock while another client's timestamp callback sets it.
    pub clock: ClockLog,
    pub warned_backlog: AtomicBool,
    /// Sees every buffer after it is written (the CUPTI multiplexer of the
    /// injection library hands records on to other CUPTI clients).
    pub observer: RwLock<Option<Arc<dyn BufferObserver>>>,
    /// The dump's meta as last written: the monitor rewrites it with its counts, the
    /// worker with what the segment writer retired.
    pub meta: Mutex<MetaFile>,
    /// What the segment writer retired so far (the worker keeps it current).
    pub retired: Mutex<Retired>,
    /// Kernels launched, and CUPTI's gaps in delivery.
    pub ledger: Mutex<Ledger>,
    /// The launch counter's total and the Unix time at the last buffer CUPTI
    /// completed: where a gap in delivery begins.
    pub last_delivery: (AtomicU64, AtomicU64),
    /// When the GPU last made progress (hang detection).
    pub progress: crate::hang_watch::Progress,
}

impl Shared {
    pub fn new(
        cupti: &'static Cupti,
        config: MonitorConfig,
        queue: Sender<Msg>,
        meta: MetaFile,
    ) -> Self {
        Self {
            cupti,
            pool: Pool::new(
                config.buffer_size as usize,
                config.max_buffers(),
                config.free_buffers,
            ),
            config,
            queue: Mutex::new(Some(queue)),
            counters: Counters::default(),
            clock: ClockLog::default(),
            warned_backlog: AtomicBool::new(false),
            observer: RwLock::new(None),
            meta: Mutex::new(meta),
            retired: Mutex::new(Retired::default()),
            ledger: Mutex::new(Ledger::default()),
            last_delivery: (AtomicU64::new(0), AtomicU64::new(0)),
            progress: crate::hang_watch::Progress::new(),
        }
    }

    /// Records dropped so far: CUPTI's count plus those over a `--raw` budget.
    pub fn dropped_records(&self) -> u64 {
        let c = &self.counters;
        c.dropped_by_cupti.load(Ordering::Relaxed) + c.records_over_budget.load(Ordering::Relaxed)
    }

    /// Rewrite the meta's launch account (with the dropped records it is read with).
    pub fn write_account(&self) {
        let ledger =
            crate::monitor::lock(&self.ledger).snapshot(&self.counters, self.dropped_records());
        let dropped = self.dropped_records();
        self.write_meta(|meta| {
            ledger.write_to(meta);
            meta.set("dropped_records", dropped);
        });
    }

    /// Rewrite the meta with `edit` applied (and what was retired); a failure is a
    /// warning: the dump's records matter more than its description.
    pub fn write_meta(&self, edit: impl FnOnce(&mut MetaFile)) {
        let mut meta = self.meta.lock().unwrap_or_else(|p| p.into_inner());
        edit(&mut meta);
        let retired = self
            .retired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if retired.segments > 0 {
            meta.set(
                "retired",
                serde_json::to_value(&retired).unwrap_or_default(),
            );
        }
        if let Err(e) = meta.write(self.config.dump_dir.join(cupmon_records::dump::META_FILE)) {
            cupmon_log::warn!("{e}");
        }
    }

    /// Send to the worker; false when the session is over.
    pub fn send(&self, msg: Msg) -> bool {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        queue.as_ref().is_some_and(|q| q.send(msg).is_ok())
    }

    pub fn close_queue(&self) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

impl Shared {
    /// CUPTI's clock and Unix time at one moment: CUPTI's read on both sides of the
    /// Unix read and halved (as PyTorch's ApproximateClockToUnixTimeConverter pairs its
    /// counter with the wall clock), so the pair has no bias from their order.
    pub fn clock_pair(&self) -> (u64, u64) {
        let before = self.cupti.timestamp().unwrap_or(0);
        let unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let after = self.cupti.timestamp().unwrap_or(0);
        // Both reads on one clock (a callback set in between would mix two).
        let cupti_ns = if after >= before && after - before < 1_000_000 {
            before + (after - before) / 2
        } else {
            after
        };
        (cupti_ns, unix_ns)
    }
}

impl ActivitySink for Shared {
    fn request_buffer(&self) -> Option<ActivityBuffer> {
        let (buffer, wake_worker) = self.pool.take();
        if wake_worker {
            self.send(Msg::Refill);
        }
        buffer
    }

    fn buffer_completed(&self, buffer: CompletedBuffer) {
        let (cupti_ns, unix_ns) = self.clock_pair();
        self.clock.note(cupti_ns, unix_ns);
        // Before the count below, so a watch that sees the new count sees these too.
        self.last_delivery
            .0
            .store(cupmon_cupti::launch_counts().kernels, Ordering::Relaxed);
        self.last_delivery.1.store(unix_ns, Ordering::Relaxed);
        self.counters.buffers_queued.fetch_add(1, Ordering::Release);
        // After the session stopped the buffer is simply freed.
        self.send(Msg::Buffer {
            buffer,
            cupti_ns,
            unix_ns,
        });
        note_backlog(self);
    }
}

/// Flag the first time the queue grows past half the buffer budget.
fn note_backlog(shared: &Shared) {
    let queued = shared.counters.buffers_queued.load(Ordering::Relaxed);
    let done = shared.counters.buffers_completed.load(Ordering::Relaxed);
    let backlog = queued.saturating_sub(done) as usize;
    shared.counters.worker.note_waiting(backlog as u64);
    if backlog * 2 > shared.config.max_buffers()
        && !shared.warned_backlog.swap(true, Ordering::Relaxed)
    {
        cupmon_log::warn!(
            "the dump writer is falling behind ({backlog} buffers waiting); if it stays behind, \
             CUPTI will drop records (they are counted)"
        );
    }
}
