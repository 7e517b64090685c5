//! The periodic flush that keeps the dump about one period behind: CUPTI
//! hands over full buffers by itself, but a partly filled one only when asked.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use cupmon_cupti::{CallbackStats, FlushFlag};

use crate::flush_caller::FlushCaller;
use crate::shared::Shared;
use crate::stall_watch::StallWatch;
use crate::MonitorError;

/// A periodic flush this many flush periods long is slow: warned about while
/// recording, and named by `cupmon stats` and `cupmon run`'s summary.
pub const SLOW_FLUSH_PERIODS: u32 = 5;

#[derive(Debug)]
pub(crate) struct Flusher {
    handle: JoinHandle<()>,
    caller: FlushCaller,
    /// Set to true to stop; the condvar wakes the thread early.
    stop: Arc<(Mutex<bool>, Condvar)>,
}

impl Flusher {
    pub fn spawn(shared: &'static Shared) -> Result<Self, MonitorError> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let theirs = Arc::clone(&stop);
        let period = shared.config.flush_period;
        let caller = FlushCaller::spawn(shared)?;
        let flushes = caller.handle();
        let handle = std::thread::Builder::new()
            .name("cupmon-flush".into())
            .spawn(move || {
                let (flag, cv) = &*theirs;
                let mut watch = TakeoverWatch::default();
                let mut starving = StarvationWatch::default();
                let mut stalls = StallWatch::default();
                let mut periods = 0u64;
                loop {
                    // Check the flag under the lock before waiting: a stop that
                    // came before this thread first took the lock must not be
                    // missed (it would cost a whole period, an hour in tests).
                    let stopped = flag.lock().unwrap_or_else(|p| p.into_inner());
                    let (stopped, _) = cv
                        .wait_timeout_while(stopped, period, |stopped| !*stopped)
                        .unwrap_or_else(|p| p.into_inner());
                    if *stopped {
                        stalls.finish(shared);
                        return;
                    }
                    drop(stopped);
                    let flush_since = std::time::Instant::now();
                    // Every period, busy or not: besides bringing back partly filled
                    // buffers, the flush seems to be what lets CUPTI reuse its device
                    // buffers. Skipping it while buffers came back by themselves stopped
                    // recording at exactly 25,000,000 records on the H200 (250 device
                    // buffers of 100,000 records, CUPTI's default pool limit) until
                    // the next flush (bench/recorder/RESULTS.md). It runs on a thread of
                    // its own, so that a flush CUPTI holds for tens of seconds does not
                    // stop the watches below; this thread waits for it up to a period.
                    flushes.request(shared, period);
                    // One look at what CUPTI holds per period: the map it reads is
                    // locked by the buffer callbacks on the launch path too.
                    let cb = cupmon_cupti::callback_stats();
                    let forced = starving.check(shared, &cb);
                    if forced {
                        starving.force(shared, &cb);
                    }
                    trace_period(shared, &cb, flush_since, forced);
                    watch.check(shared, &cb);
                    let gap_changed = stalls.check(shared);
                    let dropped = shared.dropped_records();
                    crate::monitor::lock(&shared.ledger).note_flush(&shared.counters, dropped);
                    sample_kernels(shared);
                    crate::hang_watch::check(shared);
                    periods += 1;
                    // The meta keeps the account current for a process that is killed.
                    if gap_changed || periods >= META_PERIODS {
                        periods = 0;
                        shared.write_account();
                    }
                }
            })
            .map_err(|e| MonitorError::Worker(e.to_string()))?;
        Ok(Self {
            handle,
            caller,
            stop,
        })
    }

    pub fn stop(self) {
        let (flag, cv) = &*self.stop;
        *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_all();
        let _ = self.handle.join();
        self.caller.stop();
    }
}

/// The meta's launch account is rewritten this many flush periods apart (and at every
/// gap's start and end).
const META_PERIODS: u64 = 10;

/// Keeps the longest periodic flush and warns once when one takes
/// [`SLOW_FLUSH_PERIODS`] periods. On the H200, under 1.3 M kernels/s from 8 threads,
/// CUPTI's flush grew from tens of ms to 1 s, then 9.6 s and 37 s; during the 37-s one
/// CUPTI returned almost no buffer, and
/// recording stopped for good, with most of the lost kernels not counted as dropped
/// (bench/recorder/RESULTS.md). The warning is the one sign of that a user gets.
#[derive(Debug)]
pub(crate) struct SlowFlushWatch {
    period: std::time::Duration,
    warned: bool,
}

impl SlowFlushWatch {
    pub fn new(period: std::time::Duration) -> Self {
        Self {
            period,
            warned: false,
        }
    }

    pub fn note(&mut self, shared: &Shared, took: std::time::Duration) {
        let us = took.as_micros().try_into().unwrap_or(u64::MAX);
        shared
            .counters
            .flush_longest_us
            .fetch_max(us, Ordering::Relaxed);
        if took >= self.period * SLOW_FLUSH_PERIODS && !self.warned {
            self.warned = true;
            cupmon_log::warn!(
                "CUPTI took {:.1} s to flush its buffers (the flush period is {:.1} s). Under \
                 sustained launches at this rate CUPTI has stopped returning records, and \
                 kernels after this point may be missing from the dump without being counted \
                 as dropped (a known problem: see cupmon's README)",
                took.as_secs_f64(),
                self.period.as_secs_f64()
            );
        }
    }
}

/// With `CUPMON_LOG=debug`, one line a period of what the buffers did: how long the
/// flush took (a flush that blocks stops these lines), buffers CUPTI completed and the
/// worker wrote, buffers CUPTI holds, requests refused, free buffers, records and drops.
/// Made to see what CUPTI does when recording stops under full-rate bursts.
fn trace_period(
    shared: &Shared,
    cb: &CallbackStats,
    flush_since: std::time::Instant,
    forced: bool,
) {
    if !cupmon_log::enabled(cupmon_log::Level::Debug) {
        return;
    }
    let c = &shared.counters;
    cupmon_log::debug!(
        "flusher: unix {}, period {} us{}, completed {}, written {}, held by CUPTI {}, refused {}, \
         free {}, records {}, dropped {}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        flush_since.elapsed().as_micros(),
        if forced { " (then forced)" } else { "" },
        c.buffers_queued.load(Ordering::Relaxed),
        c.buffers_completed.load(Ordering::Relaxed),
        cb.outstanding_buffers,
        cb.requests_refused,
        shared.pool.free_count(),
        c.records.load(Ordering::Relaxed),
        c.dropped_by_cupti.load(Ordering::Relaxed),
    );
}

/// Keep the kernel count of the last few periods, for the recent rate.
fn sample_kernels(shared: &Shared) {
    let c = &shared.counters;
    let mut samples = c.kernel_samples.lock().unwrap_or_else(|p| p.into_inner());
    samples.push_back((std::time::Instant::now(), c.kernels.load(Ordering::Relaxed)));
    while samples.len() > 6 {
        samples.pop_front();
    }
}

/// Notices when CUPTI starves for buffers and gives none back: no buffer completed in
/// the last period, and either buffer requests were refused in it or CUPTI holds
/// every buffer the cap allows. CUPTI hands back a buffer by itself only when it is
/// full and its records are complete, and a plain flush only buffers of complete
/// records; on the H200 sustained bursts left CUPTI holding all 64 while the program
/// went on, and recording never resumed. In the third such run no forced flush came:
/// CUPTI, once refused, seems to stop asking, so the refusals stop growing
/// (bench/recorder/RESULTS.md). A forced flush takes the buffers back (kernels still
/// running in them get no end time), and CUPTI gets buffers again. A kernel that runs
/// long (a collective waiting for a late rank) holds a buffer or two, not the cap.
#[derive(Debug, Default)]
struct StarvationWatch {
    last_completed: u64,
    last_refused: u64,
    warned: bool,
}

impl StarvationWatch {
    fn check(&mut self, shared: &Shared, cb: &CallbackStats) -> bool {
        let completed = shared.counters.buffers_queued.load(Ordering::Relaxed);
        let refused = shared.pool.refused();
        let at_cap = cb.outstanding_buffers >= shared.config.max_buffers() as u64;
        let starving = completed == self.last_completed && (refused > self.last_refused || at_cap);
        self.last_completed = completed;
        self.last_refused = refused;
        starving
    }

    fn force(&mut self, shared: &Shared, cb: &CallbackStats) {
        let c = &shared.counters;
        c.add(&c.starvation_flushes, 1);
        if !self.warned {
            self.warned = true;
            cupmon_log::warn!(
                "CUPTI held every buffer cupmon may lend ({} of {}) and returned none for a \
                 flush period, so new records had no buffer to go to: forcing a flush to take \
                 them back (allow more with CUPMON_MAX_OUTSTANDING)",
                cb.outstanding_buffers,
                shared.config.max_buffers()
            );
        }
        if let Err(e) = shared.cupti.flush_all(FlushFlag::FORCED) {
            cupmon_log::warn!("forced flush: {e}");
        }
        // What came back counts as progress at the next check.
        self.last_completed = c.buffers_queued.load(Ordering::Relaxed);
    }
}

/// Notices when cupmon's buffers stop coming back although CUPTI holds some:
/// the sign that another CUPTI client (torch.profiler without `cupmon run`)
/// registered its own activity callbacks and now receives cupmon's buffers.
#[derive(Debug, Default)]
struct TakeoverWatch {
    last_completed: u64,
    quiet_periods: u32,
    /// Buffer requests refused before the current quiet stretch began.
    refused_before: u64,
    warned: bool,
}

/// Periods without a buffer back, while CUPTI holds one of ours, before warning.
const QUIET_PERIODS: u32 = 10;

impl TakeoverWatch {
    fn check(&mut self, shared: &Shared, cb: &CallbackStats) {
        let completed = shared.counters.buffers_queued.load(Ordering::Relaxed);
        let outstanding = cb.outstanding_buffers;
        let refused = shared.pool.refused();
        if completed != self.last_completed || outstanding == 0 {
            self.last_completed = completed;
            self.quiet_periods = 0;
            self.refused_before = refused;
            return;
        }
        self.quiet_periods += 1;
        let c = &shared.counters;
        if u64::from(self.quiet_periods) > c.quiet_periods_max.load(Ordering::Relaxed) {
            c.quiet_periods_max
                .store(self.quiet_periods.into(), Ordering::Relaxed);
            c.quiet_buffers_held.store(outstanding, Ordering::Relaxed);
            c.quiet_refused
                .store(refused - self.refused_before, Ordering::Relaxed);
        }
        if self.quiet_periods == QUIET_PERIODS && !self.warned {
            self.warned = true;
            cupmon_log::warn!(
                "CUPTI has held {outstanding} of cupmon's buffers for {QUIET_PERIODS} \
                 flush periods without returning any. Another CUPTI client in this process \
                 (torch.profiler, for instance) may have taken CUPTI's activity callbacks; what it \
                 records while it holds them is lost to cupmon. Under `cupmon run` cupmon shares \
                 CUPTI instead; from Python, call cupmon.rearm() once that client is done."
            );
        }
    }
}
