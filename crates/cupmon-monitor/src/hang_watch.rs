//! Hang records: when no kernel, copy or memset has completed for `--hang-after`
//! (checked once per flush period, allowing one period for delivery), on a signal, or on request, a forced flush brings
//! back the work still running (end 0), then the worker writes `hang-N.json` from
//! what it keeps per stream and what the launch callbacks saw per thread.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use cupmon_cupti::launches::inflight::{self, ApiCall};
use cupmon_cupti::FlushFlag;
use cupmon_hang::{Call, HostLaunch, HostThread, Snapshot, StreamView, Trigger};
use cupmon_records::ApiDomain;

use crate::msg::Msg;
use crate::shared::Shared;
use crate::stall_watch::unix_ns as unix_now_ns;

/// How long a caller waits for the worker to write a record.
const WRITE_WAIT: Duration = Duration::from_secs(20);

/// Progress as the worker sees it.
#[derive(Debug)]
pub(crate) struct Progress {
    /// Unix ns when the session began.
    started_ns: u64,
    /// Unix ns of the last progress: the end of the last completed operation (its
    /// buffer's delivery, for records on another client's clock); 0: never.
    pub last_ns: AtomicU64,
    /// When the last no-progress record was written (0: none): the next one waits
    /// for progress after it (one record per stretch without progress).
    recorded_at: AtomicU64,
}

impl Progress {
    pub fn new() -> Self {
        Self {
            started_ns: unix_now_ns(),
            last_ns: AtomicU64::new(0),
            recorded_at: AtomicU64::new(0),
        }
    }
}

fn words(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        _ if s > 0 && s.checked_rem(3600) == Some(0) => format!("{}h", s / 3600),
        _ if s > 0 && s.checked_rem(60) == Some(0) => format!("{}m", s / 60),
        _ => format!("{:.1}s", d.as_secs_f64()),
    }
}

/// Once per flush period: a record when the GPU made no progress for `hang_after`.
pub(crate) fn check(shared: &'static Shared) {
    let Some(after) = shared.config.hang_after else {
        return;
    };
    let last = shared.progress.last_ns.load(Ordering::Relaxed);
    if last == 0 && inflight::last_launch_ns() == 0 {
        return; // nothing ever ran: an idle process, not a hung one
    }
    let since = last.max(shared.progress.started_ns);
    let now = unix_now_ns();
    let recorded = shared.progress.recorded_at.load(Ordering::Relaxed);
    // Completions reach the worker up to a flush period late: wait that much longer,
    // or a busy process would look stalled between two flushes.
    let threshold = (after + shared.config.flush_period).as_nanos() as u64;
    if now.saturating_sub(since) < threshold || (recorded > 0 && last <= recorded) {
        return;
    }
    shared.progress.recorded_at.store(now, Ordering::Relaxed);
    let detail = format!(
        "no kernel, copy or memset completed for {} (--hang-after)",
        words(after)
    );
    match write(shared, Trigger::NoProgress, detail) {
        Ok(path) => cupmon_log::warn!(
            "no GPU progress for {}: hang record written to {}",
            words(after),
            path.display()
        ),
        Err(e) => cupmon_log::warn!("no GPU progress: the hang record was not written: {e}"),
    }
}

/// Forces a flush and has the worker write a hang record; returns its path.
pub(crate) fn write(
    shared: &'static Shared,
    trigger: Trigger,
    detail: String,
) -> Result<PathBuf, String> {
    if let Err(e) = shared.cupti.flush_all(FlushFlag::FORCED) {
        cupmon_log::warn!("hang record: forced flush: {e}");
    }
    let (tx, rx) = mpsc::sync_channel(1);
    if !shared.send(Msg::HangRecord {
        trigger,
        detail,
        reply: tx,
    }) {
        return Err("the monitor's worker is not running".into());
    }
    rx.recv_timeout(WRITE_WAIT)
        .map_err(|_| "the monitor's worker did not answer in 20 s".to_owned())?
}

fn api_name(call: ApiCall) -> String {
    let domain = if call.domain == 1 {
        ApiDomain::Driver
    } else {
        ApiDomain::Runtime
    };
    domain.name(i128::from(call.cbid)).into_owned()
}

/// What the worker adds to its streams: the threads, the times, the notes.
pub(crate) fn snapshot(
    shared: &Shared,
    trigger: Trigger,
    detail: String,
    streams: Vec<StreamView>,
    last_completed_end_ns: Option<u64>,
) -> Snapshot {
    let seen = inflight::threads_seen();
    let mut notes = Vec::new();
    if let cupmon_cupti::Counting::Off { reason } = cupmon_cupti::launch_counting() {
        notes.push(format!(
            "launches were not followed ({reason}): no queued launches, no thread states"
        ));
    }
    if seen.untracked_threads > 0 {
        notes.push(format!(
            "{} launching threads found the table of {} full and were not followed",
            seen.untracked_threads,
            inflight::SLOTS
        ));
    }
    let threads = seen
        .threads
        .iter()
        .map(|t| HostThread {
            tid: t.tid,
            launch_count: t.launch_count,
            launches: t
                .launches
                .iter()
                .map(|l| HostLaunch {
                    correlation_id: l.correlation_id,
                    api: api_name(l.call),
                    unix_ns: l.unix_ns,
                    stream_handle: l.stream_handle,
                    symbol: l.symbol,
                })
                .collect(),
            blocked_in: t.blocked_in.map(|(call, at)| Call {
                api: api_name(call),
                at_ns: at,
            }),
            last_sync: t.last_sync.map(|(call, at)| Call {
                api: api_name(call),
                at_ns: at,
            }),
        })
        .collect();
    let last = shared.progress.last_ns.load(Ordering::Relaxed);
    let rank = crate::monitor::lock(&shared.meta).rank();
    Snapshot {
        trigger,
        detail,
        written_ns: unix_now_ns(),
        pid: std::process::id(),
        rank,
        last_progress_ns: (last > 0).then_some(last),
        last_completed_end_ns,
        last_launch_ns: Some(seen.last_launch_ns).filter(|&t| t > 0),
        streams,
        threads,
        notes,
    }
}

/// The kernel name of a launch in flight.
pub(crate) fn resolve(symbol: u64) -> Option<String> {
    inflight::symbol_name(symbol)
}
