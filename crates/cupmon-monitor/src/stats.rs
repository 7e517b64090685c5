//! What the monitor has done so far, for users (`monitor_stats()`, the
//! summary of `cupmon run`) and for the dump's meta.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::meta::MetaEntry;
use crate::worker_profile::{WorkerProfile, WorkerTimes};

/// Counters updated by the worker thread and the callbacks.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub buffers_completed: AtomicU64,
    pub buffers_queued: AtomicU64,
    pub bytes_written: AtomicU64,
    /// Activity-buffer bytes handed to the dump writer (before compression).
    pub buffer_bytes: AtomicU64,
    /// Buffers stored uncompressed because the worker was behind.
    pub frames_stored: AtomicU64,
    /// Forced flushes that took buffers back from CUPTI when it held them all.
    pub starvation_flushes: AtomicU64,
    /// Actions taken against CUPTI delivering nothing while kernels were launched.
    pub recoveries: AtomicU64,
    /// Periodic flushes skipped because the previous one had not returned.
    pub flushes_skipped: AtomicU64,
    /// The longest periodic `cuptiActivityFlushAll`, in microseconds.
    pub flush_longest_us: AtomicU64,
    /// The longest stretch of flush periods in which CUPTI held buffers and
    /// returned none: its periods, the buffers CUPTI held at its end, the buffer
    /// requests refused during it (what tells a stall from a quiet program).
    pub quiet_periods_max: AtomicU64,
    pub quiet_buffers_held: AtomicU64,
    pub quiet_refused: AtomicU64,
    /// Records not written because a `--raw` dump reached its budget.
    pub records_over_budget: AtomicU64,
    pub records: AtomicU64,
    /// Records CUPTI reported dropped (per buffer, `cuptiActivityGetNumDroppedRecords`).
    pub dropped_by_cupti: AtomicU64,
    pub records_by_kind: Mutex<BTreeMap<String, u64>>,
    pub decode_errors: AtomicU64,
    pub windows: AtomicU64,
    pub kernel_names: AtomicU64,
    /// Buffers that went to another CUPTI client (see `Monitor::rearm`).
    pub buffers_lost: AtomicU64,
    /// Kernel records (KERNEL and CONCURRENT_KERNEL) written so far.
    pub kernels: AtomicU64,
    /// (when, kernels) at the last flush periods, for the recent rate.
    pub kernel_samples: Mutex<std::collections::VecDeque<(std::time::Instant, u64)>>,
    pub worker: WorkerTimes,
}

impl Counters {
    pub fn add(&self, counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// The longest stretch of flush periods in which CUPTI held cupmon's buffers and
/// returned none: a stall (CUPTI holding buffers while the program runs), or a
/// program between bursts whose last buffer is partly filled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QuietStretch {
    pub periods: u64,
    /// Buffers CUPTI held at the stretch's last period.
    pub buffers_held: u64,
    /// Buffer requests refused during the stretch.
    pub refused: u64,
}

/// A snapshot of the monitor's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MonitorStats {
    pub running: bool,
    pub dump_dir: String,
    pub cupti_version: u32,
    pub cupti_library: String,
    /// Buffers CUPTI completed and cupmon received.
    pub buffers_completed: u64,
    /// Buffers allocated since the start (the pool reuses them).
    pub buffers_allocated: u64,
    /// Buffers lent to CUPTI or waiting for the worker.
    pub buffers_pending: u64,
    /// How many buffers were out at once, against the cap.
    pub buffers: BufferUse,
    pub buffers_free: u64,
    /// Bytes written to the dump's buffer files (headers included; compressed for
    /// segments).
    pub bytes_written: u64,
    /// Activity-buffer bytes CUPTI completed (what `bytes_written` compressed).
    pub buffer_bytes: u64,
    /// Buffers stored uncompressed because the worker was behind.
    pub frames_stored: u64,
    /// Forced flushes that took buffers back from CUPTI when it held them all and
    /// returned none for a flush period (their running kernels then have no end).
    pub starvation_flushes: u64,
    /// The longest periodic flush of CUPTI's buffers, ms. Seconds-long flushes came
    /// before recording stopped under full-rate launches on the H200.
    pub flush_longest_ms: u64,
    /// Records not written because a `--raw` dump reached its budget (also in
    /// `dropped_records`).
    pub records_over_budget: u64,
    /// Older segments retired to keep the budget, and their bytes.
    pub retired_segments: u64,
    pub retired_bytes: u64,
    pub records: u64,
    pub records_by_kind: BTreeMap<String, u64>,
    /// Records lost: CUPTI's count plus records lost to an empty pool.
    pub dropped_records: u64,
    /// Kernels launched during the session (CUPTI's launch callbacks); `None` when
    /// not counted (`launches_not_counted` says why).
    pub kernels_launched: Option<u64>,
    pub launches_not_counted: Option<String>,
    /// Kernel records written (kept or retired since).
    pub kernels_recorded: u64,
    /// Kernels launched that were neither recorded nor counted as dropped.
    pub kernels_unaccounted: Option<u64>,
    /// Graph launches whose kernels could not be counted (`kernels_launched` is then
    /// a lower bound).
    pub unsized_graph_launches: u64,
    /// Actions taken to get a stalled CUPTI delivering again, and the gaps seen.
    pub recoveries: u64,
    pub delivery_gaps: u64,
    /// Periodic flushes skipped while the previous one had not returned.
    pub flushes_skipped: u64,
    /// Buffers of records that another CUPTI client took (records unknown).
    pub buffers_lost: u64,
    /// Buffer requests refused because the cap was reached (each loses records).
    pub buffer_requests_refused: u64,
    /// The longest stretch of flush periods with buffers lent to CUPTI and none
    /// back ([`QuietStretch`]).
    pub quiet: QuietStretch,
    /// Buffers that did not decode completely (their bytes are still in the dump).
    pub decode_errors: u64,
    pub windows_taken: u64,
    pub window_open: bool,
    pub kernel_names: u64,
    /// Where the worker's time went (writing the dump, reading records).
    pub worker: WorkerProfile,
}

/// How many buffers were out at once against the cap (meta key `buffers`):
/// when records were dropped, this says whether the cap was the limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferUse {
    /// The most buffers lent to CUPTI or waiting for the worker at once.
    pub max_in_use: u64,
    /// The cap; CUPTI gets no buffer (and drops records) once it is reached.
    pub cap: u64,
    pub buffer_size: u64,
    /// Requests that found no buffer ready and got one mapped in the callback.
    pub mapped_on_request: u64,
}

impl MetaEntry for BufferUse {
    const KEY: &'static str = "buffers";
}
