//! Another CUPTI client's clock (torch.profiler registers a cycle counter as CUPTI's
//! timestamp callback, which changes cupmon's records too when nothing interposes it):
//! windows and dumps come out in Unix ns all the same.

use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cupmon_monitor::Monitor;
use cupmon_test_support::exclusive;
use cupmon_trace::{decode_dump_to_window, WindowEvent};

use crate::common::{config, fake};

/// A 2.1 GHz cycle counter started with the test process, as Kineto's clock looks.
extern "C" fn cycle_counter() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = START.get_or_init(Instant::now);
    // 40 s "since boot" so that the counter looks like one, far below Unix ns.
    (start.elapsed().as_nanos() as f64 * 2.1) as u64 + 84_000_000_000
}

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn kernels(events: &[WindowEvent]) -> Vec<(u64, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            WindowEvent::Kernel(k) => Some((k.start_ns, k.end_ns)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_window_on_another_clients_clock_comes_out_in_unix_ns() {
    let _guard = exclusive();
    let (_, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start(config(dir.path())).expect("start");
    fake.launch_kernels(5, 7, "before").expect("launch");
    monitor.flush(false).expect("flush");
    fake.set_timestamp_callback(Some(cycle_counter));
    let wall_start = unix_ns();
    monitor.start_window().expect("window");
    for _ in 0..4 {
        fake.launch_kernels(5, 7, "during").expect("launch");
        std::thread::sleep(Duration::from_millis(3));
    }
    let window = monitor.end_window().expect("end");
    let wall_end = unix_ns();
    let during = kernels(&window.events);
    assert_eq!(during.len(), 20);
    let info = window.cupmon.as_ref().expect("info");
    assert!(info.clock_converted >= 40, "{info:?}");
    assert_eq!(info.off_clock_records, 0);
    assert!(window.start_ns >= wall_start - 1_000_000 && window.start_ns <= wall_end);
    for (start, end) in during {
        assert!(
            start >= wall_start - 1_000_000 && end <= wall_end + 1_000_000,
            "{start}"
        );
        // The fake's kernels last 10,000 ticks of the clock: 4.76 us at 2.1 GHz.
        let d = (end - start) as f64;
        assert!((d - 10_000.0 / 2.1).abs() < 100.0, "duration {d} ns");
    }
    fake.launch_kernels(5, 7, "after").expect("launch");
    monitor.stop().expect("stop");
    fake.set_timestamp_callback(None);
    // Offline, the dump's samples (chunk headers, the meta's clock_samples) convert
    // the records that went to the dump on the other clock.
    let (dumped, report) = decode_dump_to_window(dir.path().join("dump"), |_| {}).expect("decode");
    assert!(report.clock_converted >= 45, "{report:?}");
    assert_eq!(report.off_clock, 0);
    let all = kernels(&dumped.events);
    assert_eq!(all.len(), 30);
    assert!(all
        .iter()
        .all(|&(s, e)| s > 1_000_000_000_000_000_000 && e >= s));
}
