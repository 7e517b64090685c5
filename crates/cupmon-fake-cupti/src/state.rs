//! The fake's process-global CUPTI state: configuration (enabled kinds, API
//! filters, callbacks), the buffers lent by the client, and counters.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use cupmon_fake_cupti_abi::FakeStats;
use cupmon_records::Record;

use crate::cupti_types::{CompleteCallback, RequestCallback};
use crate::memory::Memory;

/// What the client configured.
#[derive(Debug, Default)]
pub(crate) struct Config {
    /// Bit `k`: activity kind `k` enabled.
    pub enabled: u64,
    pub runtime: ApiFilter,
    pub driver: ApiFilter,
    pub thread_id_type: u32,
    pub callbacks: Option<Callbacks>,
    /// Delay before each asynchronous completion (a slow CUPTI thread/consumer).
    pub completion_delay_us: u64,
    /// Delay at the start of each plain `cuptiActivityFlushAll` (CUPTI's flush that
    /// took 40 s under full-rate launches on the H200).
    pub flush_delay_us: u64,
    /// Launch kernels as unfinished (see `cupmonFakeSetKernelsPending`).
    pub kernels_pending: bool,
    /// The grid's x of kernels launched from now on (0: 128).
    pub kernel_grid_x: u32,
    /// A stall (`cupmonFakeStall`): 0 none; else the action that ends it (see
    /// `cupmon_fake_cupti_abi::stall`). While it lasts records are lost uncounted.
    pub stall: u32,
    /// A kind was disabled during a stall that a re-enable ends.
    pub stall_kind_disabled: bool,
    /// CUPTI's settings as cupmon set them (`cuptiActivityFlushPeriod`,
    /// `cuptiActivitySetAttribute`); 0: never set.
    pub flush_period_ms: u64,
    pub device_buffer_size: u64,
    pub device_buffer_pool_limit: u64,
}

impl Config {
    pub fn is_enabled(&self, kind: u32) -> bool {
        kind < 64 && self.enabled & (1 << kind) != 0
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Callbacks {
    pub request: RequestCallback,
    pub complete: CompleteCallback,
}

/// CUPTI's RUNTIME/DRIVER selection: the kind switches every call on or off and
/// clears per-call settings; `cuptiActivityEnable{Runtime,Driver}Api` then
/// overrides single calls.
#[derive(Debug, Default)]
pub(crate) struct ApiFilter {
    pub all: bool,
    pub overrides: HashMap<u32, bool>,
}

impl ApiFilter {
    pub fn allows(&self, cbid: u32) -> bool {
        self.overrides.get(&cbid).copied().unwrap_or(self.all)
    }

    pub fn set_all(&mut self, all: bool) {
        self.all = all;
        self.overrides.clear();
    }
}

/// One record held by the fake until its buffer is delivered (encoded then, so
/// a pending kernel can still be finished).
#[derive(Debug)]
pub(crate) struct HeldRecord {
    pub record: Record,
    /// A kernel launched while kernels were pending and not finished yet.
    pub pending: bool,
}

/// A buffer lent by the client: its memory (the fake's until delivered) and the
/// records that will fill it.
#[derive(Debug)]
pub(crate) struct LentBuffer {
    pub ptr: usize,
    pub size: usize,
    pub used: usize,
    pub records: Vec<HeldRecord>,
}

impl LentBuffer {
    pub fn is_complete(&self) -> bool {
        self.records.iter().all(|held| !held.pending)
    }
}

#[derive(Debug, Default)]
pub(crate) struct Buffers {
    /// The buffer being filled.
    pub open: Option<LentBuffer>,
    /// Full buffers in fill order, waiting for delivery.
    pub full: VecDeque<LentBuffer>,
    /// Dropped since the last `cuptiActivityGetNumDroppedRecords`.
    pub dropped: u64,
}

/// Counters behind `cupmonFakeStats`.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub records_emitted: AtomicU64,
    pub records_dropped: AtomicU64,
    pub buffers_requested: AtomicU64,
    pub buffers_refused: AtomicU64,
    pub buffers_delivered: AtomicU64,
    pub foreign_buffers_delivered: AtomicU64,
    pub flush_calls: AtomicU64,
    pub register_calls: AtomicU64,
    pub finalize_calls: AtomicU64,
    pub callbacks_issued: AtomicU64,
    pub records_lost_in_stall: AtomicU64,
    pub stall_recoveries: AtomicU64,
}

impl Counters {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn reset(&self) {
        for counter in [
            &self.records_emitted,
            &self.records_dropped,
            &self.buffers_requested,
            &self.buffers_refused,
            &self.buffers_delivered,
            &self.foreign_buffers_delivered,
            &self.flush_calls,
            &self.register_calls,
            &self.finalize_calls,
            &self.callbacks_issued,
            &self.records_lost_in_stall,
            &self.stall_recoveries,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
    }
}

/// Everything, behind separate locks. Lock order: `emit` → `config` → `memory`
/// → `buffers`;
/// `delivery` is taken with none of the others held, and no lock but `delivery`
/// is held while a client callback runs.
#[derive(Debug, Default)]
pub(crate) struct Fake {
    pub config: Mutex<Config>,
    pub buffers: Mutex<Buffers>,
    /// Live allocations and pool use.
    pub memory: Mutex<Memory>,
    /// Signalled when a full buffer is queued or kernels finish.
    pub buffers_changed: Condvar,
    /// Serialises record emission, so buffers fill in one order.
    pub emit: Mutex<()>,
    /// Serialises completion callbacks, so buffers are delivered in fill order.
    pub delivery: Mutex<()>,
    pub counters: Counters,
}

pub(crate) fn fake() -> &'static Fake {
    static FAKE: std::sync::OnceLock<Fake> = std::sync::OnceLock::new();
    FAKE.get_or_init(Fake::default)
}

/// Locks, ignoring poisoning: a panic in the fake aborts (it is behind
/// `extern "C"`), so a poisoned lock is never observed in practice.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Fake {
    pub fn stats(&self) -> FakeStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let c = &self.counters;
        let (enabled_kinds, thread_id_type, stalled, settings) = {
            let config = lock(&self.config);
            (
                config.enabled,
                u64::from(config.thread_id_type),
                u64::from(config.stall),
                (
                    config.flush_period_ms,
                    config.device_buffer_size,
                    config.device_buffer_pool_limit,
                ),
            )
        };
        let subscribed = u64::from(crate::subscriber::subscribed());
        let live_allocations = lock(&self.memory).live_count();
        let buffers = lock(&self.buffers);
        let held = buffers.open.iter().chain(&buffers.full);
        let pending_kernels = held.flat_map(|b| &b.records).filter(|r| r.pending).count() as u64;
        FakeStats {
            records_emitted: load(&c.records_emitted),
            records_dropped: load(&c.records_dropped),
            buffers_requested: load(&c.buffers_requested),
            buffers_refused: load(&c.buffers_refused),
            buffers_delivered: load(&c.buffers_delivered),
            buffers_waiting: buffers.full.len() as u64,
            foreign_buffers_delivered: load(&c.foreign_buffers_delivered),
            flush_calls: load(&c.flush_calls),
            register_calls: load(&c.register_calls),
            finalize_calls: load(&c.finalize_calls),
            enabled_kinds,
            thread_id_type,
            pending_kernels,
            live_allocations,
            callbacks_issued: load(&c.callbacks_issued),
            records_lost_in_stall: load(&c.records_lost_in_stall),
            stalled,
            stall_recoveries: load(&c.stall_recoveries),
            flush_period_ms: settings.0,
            device_buffer_size: settings.1,
            device_buffer_pool_limit: settings.2,
            subscribed,
        }
    }
}
