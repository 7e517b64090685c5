//! Every kernel accounted for, against the fake libcupti: the launch counter in the
//! meta and the stats (eager and graph launches), and CUPTI's silent stall seen on the
//! H200 (it holds none of cupmon's buffers, asks for none, and loses records without
//! counting them as dropped): detected, recovered, its gap and its loss counted so
//! that launched = recorded + dropped + unaccounted to the kernel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cupmon_monitor::{Monitor, MonitorConfig};
use cupmon_records::dump::{Counted, KernelAccount};
use cupmon_records::Dump;
use cupmon_test_support::{exclusive, stall, FakeControls};

use crate::common::{config, fake};

fn account(dir: &std::path::Path) -> KernelAccount {
    KernelAccount::of(Dump::open(dir.join("dump")).expect("dump").meta())
}

fn counted(account: KernelAccount) -> Counted {
    match account {
        KernelAccount::Counted(c) => c,
        other => panic!("launches not counted: {other:?}"),
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn eager_and_graph_launches_are_counted_to_the_kernel() {
    let _x = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let monitor = Monitor::start_with(cupti, config(dir.path())).expect("start");
    let graph = fake.graph_instantiate(64, 8, false).unwrap();
    fake.launch_kernels(500, 1, "eager").unwrap();
    fake.graph_launch(graph, 10, 2, "node").unwrap();
    fake.launch_kernels_via(1, 307, 20, 1, "driver", 0).unwrap();
    let (stats, _) = monitor.stop().expect("stop");
    fake.graph_destroy(graph).unwrap();
    let launched = 500 + 10 * 72 + 20;
    assert_eq!(stats.kernels_launched, Some(launched), "{stats:?}");
    assert_eq!(stats.kernels_unaccounted, Some(0));
    let c = counted(account(dir.path()));
    assert_eq!(
        (c.launched, c.recorded, c.dropped, c.unaccounted),
        (launched, launched, Some(0), Some(0))
    );
    assert!(c.gaps.is_empty() && c.recoveries.is_empty() && !c.not_final);
    assert!(c.losses.is_empty(), "nothing lost, no loss placed: {c:?}");
}

#[test]
fn launches_not_counted_are_said_so_never_zero() {
    let _x = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.count_launches = false;
    let monitor = Monitor::start_with(cupti, c).expect("start");
    fake.launch_kernels(10, 1, "k").unwrap();
    let (stats, _) = monitor.stop().expect("stop");
    assert_eq!(stats.kernels_launched, None);
    assert_eq!(stats.kernels_unaccounted, None);
    let account = account(dir.path());
    assert!(
        matches!(&account, KernelAccount::NotCounted { reason } if reason.contains("CUPMON_COUNT_LAUNCHES=0")),
        "{account:?}"
    );
}

/// Launches kernels on a thread until dropped, as a program does while CUPTI stalls.
struct Launcher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Launcher {
    fn start(fake: FakeControls) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let theirs = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !theirs.load(Ordering::SeqCst) {
                fake.launch_kernels(10, 3, "steady").unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn stall_config(dir: &std::path::Path, recover: bool) -> MonitorConfig {
    let mut c = config(dir);
    c.flush_period = Duration::from_millis(20);
    c.stall_periods = 3;
    c.stall_kernels = 1;
    c.recover = recover;
    c
}

/// Runs a stall ending on `mode` with launches going on throughout; returns the
/// meta's account and the records the fake lost in it.
fn stall_run(mode: u32, recover: bool) -> (Counted, u64) {
    let _x = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let monitor = Monitor::start_with(cupti, stall_config(dir.path(), recover)).expect("start");
    let launcher = Launcher::start(fake);
    std::thread::sleep(Duration::from_millis(100));
    fake.stall(mode).unwrap();
    if recover && mode != stall::FOREVER {
        wait_for("cupmon to end the stall", || fake.stats().stalled == 0);
        // Records come back, the gap closes.
        wait_for("the gap to close", || {
            matches!(monitor.kernel_account(), KernelAccount::Counted(ref c)
                if c.not_final && c.gaps.first().is_some_and(|g| g.to_unix_ns.is_some()))
        });
    } else {
        wait_for("the gap to open", || monitor.stats().delivery_gaps > 0);
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(launcher);
    let (stats, _) = monitor.stop().expect("stop");
    fake.stall(stall::NONE).unwrap();
    let lost = fake.stats().records_lost_in_stall;
    let c = counted(account(dir.path()));
    assert_eq!(stats.kernels_unaccounted, c.unaccounted, "{stats:?}");
    // When the loss happened, to the flush period: ranges that add up to it, the
    // last of them past CUPTI's last delivery before the gap.
    let placed: u64 = c.losses.iter().map(|l| l.kernels).sum();
    assert_eq!(Some(placed), c.unaccounted, "{c:?}");
    assert!(
        c.losses.iter().all(|l| l.from_unix_ns < l.to_unix_ns),
        "{c:?}"
    );
    assert!(c
        .losses
        .windows(2)
        .all(|w| w[0].to_unix_ns < w[1].from_unix_ns));
    if let (Some(last), Some(gap)) = (c.losses.last(), c.gaps.first()) {
        assert!(last.to_unix_ns > gap.from_unix_ns, "{c:?}");
    }
    (c, lost)
}

#[test]
fn a_stall_with_no_buffers_held_is_seen_and_counted() {
    // Recovery off: the gap is recorded and the loss counted, to the kernel.
    let (c, lost) = stall_run(stall::FOREVER, false);
    assert!(lost > 0);
    assert_eq!(c.unaccounted, Some(lost), "{c:?}");
    assert_eq!(
        c.launched,
        c.recorded + c.dropped.unwrap() + c.unaccounted.unwrap()
    );
    assert_eq!(c.gaps.len(), 1, "{c:?}");
    let gap = &c.gaps[0];
    assert_eq!(gap.to_unix_ns, None, "never recovered: {gap:?}");
    assert!(gap.kernels_launched >= lost, "{gap:?} lost {lost}");
    assert!(c.recoveries.is_empty());
}

#[test]
fn a_stall_ended_by_a_forced_flush_is_recovered_and_its_gap_counted() {
    let (c, lost) = stall_run(stall::ENDS_ON_FORCED_FLUSH, true);
    assert_eq!(c.unaccounted, Some(lost), "{c:?}");
    assert_eq!(
        c.launched,
        c.recorded + c.dropped.unwrap() + c.unaccounted.unwrap()
    );
    let gap = &c.gaps[0];
    assert!(
        gap.to_unix_ns.is_some_and(|to| to > gap.from_unix_ns),
        "{gap:?}"
    );
    assert_eq!(gap.recovered_by.as_deref(), Some("forced_flush"));
    assert_eq!(c.recoveries.len(), 1, "{c:?}");
    assert!(c.recoveries[0].worked);
}

#[test]
fn a_stall_a_forced_flush_does_not_end_gets_the_kinds_reenabled() {
    let (c, lost) = stall_run(stall::ENDS_ON_KIND_REENABLED, true);
    assert_eq!(c.unaccounted, Some(lost), "{c:?}");
    let actions: Vec<(&str, bool)> = c
        .recoveries
        .iter()
        .map(|r| (r.action.as_str(), r.worked))
        .collect();
    assert_eq!(
        actions,
        [("forced_flush", false), ("kinds_reenabled", true)],
        "{c:?}"
    );
    assert_eq!(c.gaps[0].recovered_by.as_deref(), Some("kinds_reenabled"));
}

#[test]
fn a_stall_that_needs_the_callbacks_registered_again_escalates_to_it() {
    let (c, lost) = stall_run(stall::ENDS_ON_CALLBACKS_REGISTERED, true);
    assert_eq!(c.unaccounted, Some(lost), "{c:?}");
    assert_eq!(
        c.recoveries.last().map(|r| (r.action.as_str(), r.worked)),
        Some(("callbacks_registered", true)),
        "{c:?}"
    );
}

#[test]
fn cuptis_own_settings_are_applied_and_kept_in_the_meta() {
    let _x = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    c.cupti_flush_period = Some(Duration::from_millis(250));
    c.cupti_device_buffer_size = Some(8 << 20);
    c.cupti_device_buffer_pool_limit = Some(1000);
    let monitor = Monitor::start_with(cupti, c).expect("start");
    let stats = fake.stats();
    assert_eq!(
        (
            stats.flush_period_ms,
            stats.device_buffer_size,
            stats.device_buffer_pool_limit
        ),
        (250, 8 << 20, 1000)
    );
    monitor.stop().expect("stop");
    let meta = Dump::open(dir.path().join("dump")).unwrap().meta().clone();
    assert_eq!(
        meta.json()["cupti_settings"]["device_buffer_pool_limit"],
        1000
    );
}
