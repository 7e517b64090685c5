//! The monitor's threading, pool, cap, windows, flush and shutdown, against
//! the fake libcupti (`cupmon-fake-cupti`), which behaves like CUPTI 13.0.

use std::time::Duration;

use cupmon_cupti::ActivityKind;
use cupmon_monitor::{BufferUse, MetaEntry, Monitor, MonitorConfig, MonitorStats, WorkerProfile};
use cupmon_records::dump_stats;
use cupmon_test_support::exclusive;
use cupmon_trace::decode_dump_to_window;
use cupmon_trace::{export_window, ExportOptions, MergeWindow, WindowEvent};

use crate::common::{config, fake, kinds};

#[test]
fn always_on_dump_has_every_kernel_copy_and_memset_with_names() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    // Default settings: 4 MiB buffers, a 256 MiB cap.
    let monitor =
        Monitor::start_with(cupti, MonitorConfig::new(dir.path().join("dump"))).expect("start");
    fake.launch_kernels(5000, 7, "_ZN4demo5scaleIfEEvPT_S1_i")
        .expect("launch");
    fake.launch_kernels(10, 13, "plain_c_kernel")
        .expect("launch");
    fake.memcpy(12, 4096, 1, 7).expect("memcpy");
    fake.memset(5, 1024, 0, 13).expect("memset");
    let (stats, window) = monitor.stop().expect("stop");
    assert!(window.is_none());
    assert_eq!(stats.dropped_records, 0);
    assert_eq!(stats.records_by_kind.get("CONCURRENT_KERNEL"), Some(&5010));
    let (window, report) = decode_dump_to_window(dir.path().join("dump"), |_| {}).expect("decode");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(kinds(&window.events, "kernel"), 5010);
    assert_eq!(kinds(&window.events, "gpu_memcpy"), 12);
    assert_eq!(kinds(&window.events, "gpu_memset"), 5);
    assert_eq!(
        kinds(&window.events, "cuda_runtime"),
        0,
        "API records only in windows"
    );
    let names: std::collections::BTreeSet<String> = window
        .events
        .iter()
        .filter_map(|e| match e {
            WindowEvent::Kernel(k) => Some(k.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        [
            "plain_c_kernel",
            "void demo::scale<float>(float*, float, int)"
        ]
    );
    assert_eq!(
        report.dropped_records,
        Some(0),
        "the meta says how many were dropped"
    );
    // The worker's profile is in the stats and in the meta, and adds up.
    let w = &stats.worker;
    assert!(w.alive_ms >= w.busy_ms && w.busy_ms >= w.write_ms, "{w:?}");
    assert_eq!(
        w.write_ms,
        w.write_on_cpu_ms + w.write_waiting_for_cpu_ms + w.write_blocked_ms,
        "{w:?}"
    );
    let meta = dump_meta(dir.path());
    assert_eq!(WorkerProfile::from_meta(&meta).as_ref(), Some(w));
    assert_eq!(BufferUse::from_meta(&meta), Some(stats.buffers.clone()));
}

#[test]
fn flush_timer_keeps_the_dump_a_period_behind() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.flush_period = Duration::from_millis(50);
    let monitor = Monitor::start_with(cupti, c).expect("start");
    fake.launch_kernels(20, 7, "k").expect("launch");
    std::thread::sleep(Duration::from_millis(400));
    let stats = dump_stats(dir.path().join("dump"), 5, |_| {}).expect("stats");
    assert_eq!(
        stats.report.records, 20,
        "written without an explicit flush"
    );
    monitor.stop().expect("stop");
}

#[test]
fn window_holds_api_calls_after_its_start_and_their_gpu_work() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, config(dir.path())).expect("start");
    fake.launch_kernels(30, 7, "before").expect("launch");
    monitor.prepare_window().expect("prepare");
    let start = monitor.start_window().expect("start window");
    assert!(start > 0);
    let id = monitor.push_annotation("step 1").expect("push");
    fake.launch_kernels(40, 7, "during").expect("launch");
    fake.runtime_call(17)
        .expect("cudaGetDevice is filtered out");
    monitor.pop_annotation().expect("pop");
    fake.memcpy(2, 64, 2, 7).expect("memcpy");
    let window = monitor.end_window().expect("end window");
    fake.launch_kernels(30, 7, "after").expect("launch");
    assert_eq!(window.start_ns, start);
    assert_eq!(kinds(&window.events, "kernel"), 40);
    assert_eq!(
        kinds(&window.events, "cuda_runtime"),
        42,
        "40 launches + 2 copies, no cudaGetDevice"
    );
    assert_eq!(kinds(&window.events, "gpu_memcpy"), 2);
    assert_eq!(kinds(&window.events, "external_correlation"), 40);
    assert_eq!(
        window.user_annotations.get(&id).map(String::as_str),
        Some("step 1")
    );
    assert!(window.extra_activities.contains(&ActivityKind::RUNTIME.0));
    // PyTorch's merge's order: API records, then external correlation, then GPU records.
    let order: Vec<&str> = window.events.iter().map(WindowEvent::kind_name).collect();
    let first_gpu = order.iter().position(|k| *k == "kernel").expect("kernels");
    assert!(order[first_gpu..]
        .iter()
        .all(|k| *k == "kernel" || *k == "gpu_memcpy"));
    // Every kernel gets a launch -> kernel arrow in the exported trace.
    let out = dir.path().join("w.trace.json");
    export_window(&MergeWindow::from(&window), &out, &ExportOptions::default()).expect("export");
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("read")).expect("json");
    let events = trace["traceEvents"].as_array().expect("events");
    let count = |ph: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == ph && e["cat"] == "ac2g")
            .count()
    };
    assert_eq!(count("s"), 42);
    assert_eq!(count("f"), 42);
    assert!(events
        .iter()
        .any(|e| e["cat"] == "gpu_user_annotation" && e["name"] == "step 1"));
    let (stats, _) = monitor.stop().expect("stop");
    assert_eq!(stats.records_by_kind.get("CONCURRENT_KERNEL"), Some(&100));
    assert_eq!(stats.windows_taken, 1);
    // The always-on dump kept every kernel, window or not, and the annotation names.
    let (dumped, _) = decode_dump_to_window(dir.path().join("dump"), |_| {}).expect("decode");
    assert_eq!(kinds(&dumped.events, "kernel"), 100);
    assert_eq!(
        dumped.user_annotations.get(&id).map(String::as_str),
        Some("step 1")
    );
}

#[test]
fn regression_every_annotation_name_ever_pushed_was_held_in_memory() {
    // NVTX ranges are pushed all the time (every step, every layer): the monitor keeps
    // the names of open annotations and of those a window needs, the dump's log the rest.
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, config(dir.path())).expect("start");
    let outer = monitor.push_annotation("epoch").expect("push");
    let mut before = Vec::new();
    for i in 0..1000 {
        before.push(monitor.push_annotation(&format!("step {i}")).expect("push"));
        monitor.pop_annotation().expect("pop");
    }
    monitor.prepare_window().expect("prepare");
    monitor.start_window().expect("start window");
    let during = monitor.push_annotation("step 1000").expect("push");
    fake.launch_kernels(3, 7, "k").expect("launch");
    monitor.pop_annotation().expect("pop");
    let window = monitor.end_window().expect("end window");
    assert_eq!(
        window.user_annotations.keys().copied().collect::<Vec<_>>(),
        [outer, during],
        "the open one and the window's own"
    );
    monitor.pop_annotation().expect("pop epoch");
    monitor.stop().expect("stop");
    let (dumped, _) = decode_dump_to_window(dir.path().join("dump"), |_| {}).expect("decode");
    assert_eq!(
        dumped
            .user_annotations
            .get(&before[999])
            .map(String::as_str),
        Some("step 999"),
        "the dump names every annotation"
    );
}

#[test]
fn regression_every_nvtx_push_wrote_a_line_to_the_annotation_log() {
    // Shared (NVTX) annotations are logged only when a record can name them: pushed
    // while a window is prepared or open, or still open when one is prepared.
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, config(dir.path())).expect("start");
    let name = |s: &str| std::sync::Arc::<str>::from(s);
    let outer = monitor
        .push_shared_annotation(&name("epoch"))
        .expect("push");
    let forward = name("forward");
    for _ in 0..1000 {
        let id = monitor.push_shared_annotation(&forward).expect("push");
        fake.launch_kernels(1, 7, "k").expect("launch");
        assert_eq!(monitor.pop_shared_annotation().expect("pop"), id);
        monitor.annotation_closed(id);
    }
    monitor.prepare_window().expect("prepare");
    monitor.start_window().expect("start window");
    let during = monitor.push_shared_annotation(&forward).expect("push");
    fake.launch_kernels(2, 7, "k").expect("launch");
    monitor.pop_shared_annotation().expect("pop");
    monitor.annotation_closed(during);
    let window = monitor.end_window().expect("end window");
    assert_eq!(
        window.user_annotations.keys().copied().collect::<Vec<_>>(),
        [outer, during]
    );
    monitor.pop_shared_annotation().expect("pop epoch");
    monitor.annotation_closed(outer);
    monitor.stop().expect("stop");
    let log = std::fs::read_to_string(dir.path().join("dump/user_annotations.jsonl")).expect("log");
    assert_eq!(log.lines().count(), 2, "{log}");
    let (dumped, _) = decode_dump_to_window(dir.path().join("dump"), |_| {}).expect("decode");
    assert_eq!(
        dumped
            .user_annotations
            .values()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        ["epoch", "forward"]
    );
}

#[test]
fn window_calls_out_of_order_are_errors_not_panics() {
    let _guard = exclusive();
    let (cupti, _fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, config(dir.path())).expect("start");
    assert!(monitor.end_window().is_err());
    assert!(monitor.pop_annotation().is_err());
    monitor.start_window().expect("start without prepare");
    assert!(monitor.start_window().is_err());
    assert!(monitor.prepare_window().is_err());
    // Stopping with a window open closes it and returns it.
    let (_, window) = monitor.stop().expect("stop");
    assert!(window.is_some());
}

#[test]
fn past_the_cap_records_are_dropped_and_counted_not_buffered() {
    let _guard = exclusive();
    let log = std::sync::Arc::new(cupmon_log::Capture::start());
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.max_outstanding_bytes = 2 * c.buffer_size;
    c.free_buffers = 2;
    let monitor = Monitor::start_with(cupti, c).expect("start");
    // A slow writer, made so by waiting rather than by timing: it holds its first
    // buffer until the second is queued behind it and the warning said so (on a
    // loaded machine a fast writer used to finish the first before the second came).
    let slow_writer = std::sync::Arc::new(HoldFirstBufferUntil {
        log: std::sync::Mutex::new(Some(log.clone())),
        said: "the dump writer is falling behind",
    });
    monitor.set_observer(slow_writer.clone());
    // A slow CUPTI too: full buffers are held back, so the two buffers run out.
    fake.set_completion_delay(Duration::from_millis(200));
    fake.launch_kernels(20_000, 7, "k").expect("launch");
    fake.set_completion_delay(Duration::ZERO);
    let (stats, _) = monitor.stop().expect("stop");
    assert!(
        stats.buffers_allocated <= 2,
        "the heap stays bounded: {stats:?}"
    );
    let kept = stats
        .records_by_kind
        .get("CONCURRENT_KERNEL")
        .copied()
        .unwrap_or(0);
    assert!(kept < 20_000, "{stats:?}");
    assert_eq!(
        kept + stats.dropped_records,
        20_000,
        "every record kept or counted: {stats:?}"
    );
    assert!(stats.buffer_requests_refused > 0);
    assert_eq!(
        (stats.buffers.max_in_use, stats.buffers.cap),
        (2, 2),
        "the stats say the cap was reached"
    );
    assert!(
        log.said("warning: the dump writer is falling behind (2 buffers waiting)"),
        "{:?}",
        log.lines()
    );
    assert!(
        slow_writer.log.lock().expect("lock").is_none(),
        "the writer was held"
    );
}

/// A [`cupmon_monitor::BufferObserver`] that keeps the writer on its first buffer
/// until the log says `said` (at most 30 s, so a broken monitor fails the test
/// instead of hanging it), then lets every buffer through.
struct HoldFirstBufferUntil {
    /// Taken (dropped) once released, so the capture ends with the test.
    log: std::sync::Mutex<Option<std::sync::Arc<cupmon_log::Capture>>>,
    said: &'static str,
}

impl cupmon_monitor::BufferObserver for HoldFirstBufferUntil {
    fn on_buffer(&self, _records: &[u8], _cupti_version: u32) {
        let Some(log) = self.log.lock().expect("lock").take() else {
            return;
        };
        let give_up = std::time::Instant::now() + Duration::from_secs(30);
        while !log.said(self.said) && std::time::Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn stop_flushes_unfinished_work_and_a_second_session_starts_clean() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, config(dir.path())).expect("start");
    fake.set_kernels_pending(true);
    fake.launch_kernels(3, 7, "still running").expect("launch");
    let (stats, _) = monitor.stop().expect("stop");
    fake.set_kernels_pending(false);
    assert_eq!(stats.records_by_kind.get("CONCURRENT_KERNEL"), Some(&3));
    let mut second = config(dir.path());
    second.dump_dir = dir.path().join("second");
    let monitor = Monitor::start_with(cupti, second).expect("restart");
    fake.launch_kernels(4, 7, "k").expect("launch");
    let (stats, _) = monitor.stop().expect("stop");
    assert_eq!(stats.records_by_kind.get("CONCURRENT_KERNEL"), Some(&4));
}

#[test]
fn an_unwritable_dump_directory_is_a_clear_error() {
    let _guard = exclusive();
    let (cupti, _fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let err =
        Monitor::start_with(cupti, MonitorConfig::new(file.join("dump"))).expect_err("must fail");
    assert!(err.to_string().contains("a-file"), "{err}");
}

/// A cap of two buffers, flushed every 50 ms: CUPTI can hold the whole cap.
fn two_buffers(dir: &std::path::Path) -> MonitorConfig {
    let mut c = config(dir);
    c.max_outstanding_bytes = 2 * c.buffer_size;
    c.free_buffers = 2;
    c.flush_period = Duration::from_millis(50);
    c
}

/// The meta of the dump in `dir`.
fn dump_meta(dir: &std::path::Path) -> cupmon_records::MetaFile {
    cupmon_records::MetaFile::read(dir.join("dump").join(cupmon_records::dump::META_FILE))
        .expect("meta")
}

/// The kernels of the dump in `dir`, counted per stream.
fn kernels_by_stream(dir: &std::path::Path) -> std::collections::BTreeMap<u32, u64> {
    let dump = cupmon_records::Dump::open(dir.join("dump")).expect("dump");
    let mut by_stream = std::collections::BTreeMap::new();
    cupmon_records::walk_records(
        &dump,
        |_| {},
        |_, _, r| {
            if let cupmon_records::Record::Kernel(k) = r {
                *by_stream.entry(k.stream_id).or_insert(0) += 1;
            }
        },
    )
    .expect("walk");
    by_stream
}

/// Under [`two_buffers`]: `held` kernels on stream 7 that do not finish (CUPTI keeps
/// their buffers: a plain flush leaves them), 500 ms of flush periods for the flusher
/// to see CUPTI holding them, then 100 more kernels on stream 8 (launched while
/// `after_still_pending`, or once kernels finish again). The stats and the dump's
/// kernels per stream.
fn hold_then_launch(
    held: u32,
    after_still_pending: bool,
) -> (
    MonitorStats,
    std::collections::BTreeMap<u32, u64>,
    Vec<String>,
) {
    let _guard = exclusive();
    let log = cupmon_log::Capture::start();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, two_buffers(dir.path())).expect("start");
    fake.set_kernels_pending(true);
    fake.launch_kernels(held, 7, "held").expect("launch");
    std::thread::sleep(Duration::from_millis(500));
    fake.set_kernels_pending(after_still_pending);
    fake.launch_kernels(100, 8, "after").expect("launch");
    fake.set_kernels_pending(false);
    fake.finish_kernels().expect("finish");
    let (stats, _) = monitor.stop().expect("stop");
    (stats, kernels_by_stream(dir.path()), log.lines())
}

/// The forced flush's warning, said once per stall.
const FORCED_FLUSH: &str = "warning: CUPTI held every buffer cupmon may lend (2 of 2) and returned none for a flush period, so new records had no buffer to go to: forcing a flush";

#[test]
fn cupti_holding_every_buffer_gets_a_forced_flush_and_recording_resumes() {
    // The two buffers run out and requests are refused; the flusher sees CUPTI
    // holding everything and forces a flush, which gives the buffers back.
    let (stats, by_stream, said) = hold_then_launch(5_000, true);
    assert!(said.iter().any(|l| l.contains(FORCED_FLUSH)), "{said:?}");
    assert!(stats.buffer_requests_refused > 0, "{stats:?}");
    assert!(stats.starvation_flushes > 0, "{stats:?}");
    assert_eq!(
        by_stream.get(&8),
        Some(&100),
        "the kernels launched after the stall are recorded"
    );
}

#[test]
fn cupti_holding_the_whole_cap_without_asking_for_more_gets_a_forced_flush() {
    // The third H200 stall: CUPTI held buffers and returned none, but the refusals
    // stopped growing, so a check on refusals alone never forced the flush. Here
    // the fake fills the first of two buffers and part of the second: it holds the
    // whole cap and asks for nothing more.
    // 64 KiB buffers of 224-byte kernel records: 292 fill one, 400 spill into the next.
    let (stats, by_stream, said) = hold_then_launch(400, false);
    assert!(said.iter().any(|l| l.contains(FORCED_FLUSH)), "{said:?}");
    assert_eq!(stats.buffer_requests_refused, 0, "{stats:?}");
    assert!(stats.starvation_flushes > 0, "{stats:?}");
    // Every kernel in the dump, on its stream: the held ones and those after.
    assert_eq!(by_stream, [(7, 400), (8, 100)].into(), "{stats:?}");
}

#[test]
fn buffers_cupti_holds_without_refusals_are_kept_as_the_flushers_quiet_stretch() {
    // CUPTI holds buffers and returns none, asks for no more (no request refused),
    // and holds less than the cap: no forced flush (a long kernel looks like this).
    // The meta keeps the longest such stretch for the next run on the GPU to read.
    let _guard = exclusive();
    let log = cupmon_log::Capture::start();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.flush_period = Duration::from_millis(50);
    let monitor = Monitor::start_with(cupti, c).expect("start");
    fake.set_kernels_pending(true);
    fake.launch_kernels(1_000, 7, "held").expect("launch");
    std::thread::sleep(Duration::from_millis(600));
    fake.set_kernels_pending(false);
    fake.finish_kernels().expect("finish");
    let (stats, _) = monitor.stop().expect("stop");
    assert_eq!(stats.buffer_requests_refused, 0, "{stats:?}");
    assert_eq!(stats.starvation_flushes, 0, "{stats:?}");
    assert!(stats.quiet.periods >= 5, "{stats:?}");
    assert!(stats.quiet.buffers_held >= 1, "{stats:?}");
    assert_eq!(stats.quiet.refused, 0, "{stats:?}");
    assert!(
        log.said("of cupmon's buffers for 10 flush periods without returning any"),
        "{:?}",
        log.lines()
    );
    let meta = dump_meta(dir.path());
    assert_eq!(
        meta.json()["flusher_quiet"]["periods"].as_u64(),
        Some(stats.quiet.periods),
        "{:?}",
        meta.json()
    );
}

#[test]
fn the_longest_periodic_flush_is_kept_in_the_stats_and_the_meta() {
    // On the H200 CUPTI's flush grew to 37 s before recording stopped: the meta keeps
    // the longest one, which `cupmon stats` shows and warns about.
    let _guard = exclusive();
    let log = cupmon_log::Capture::start();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = config(dir.path());
    c.flush_period = Duration::from_millis(50);
    let monitor = Monitor::start_with(cupti, c).expect("start");
    fake.set_flush_delay(Duration::from_millis(300));
    fake.launch_kernels(100, 7, "k").expect("launch");
    std::thread::sleep(Duration::from_millis(700));
    fake.set_flush_delay(Duration::ZERO);
    let (stats, _) = monitor.stop().expect("stop");
    assert!((300..5_000).contains(&stats.flush_longest_ms), "{stats:?}");
    let meta = dump_meta(dir.path());
    assert_eq!(
        meta.json()["flush_longest_ms"].as_u64(),
        Some(stats.flush_longest_ms)
    );
    assert_eq!(
        meta.json()["flush_period_ms"].as_u64(),
        Some(50),
        "what it is measured against"
    );
    assert_eq!(stats.records_by_kind.get("CONCURRENT_KERNEL"), Some(&100));
    assert!(
        log.said("s to flush its buffers (the flush period is "),
        "{:?}",
        log.lines()
    );
}

#[test]
fn a_burst_of_a_quarter_of_the_cap_keeps_the_segment_digest() {
    // CUPTI hands buffers over in bursts: on the H200 at 600,000 kernels/s up to 29
    // of 64 waited for the writer at once. A writer that skipped the digest at an
    // eighth of the cap lost the digest of every segment of that run.
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let c = config(dir.path()); // 64 KiB buffers, a cap of 64
    let monitor = Monitor::start_with(cupti, c).expect("start");
    // Held while their kernels run, then completed together: about 16 buffers at once.
    fake.set_kernels_pending(true);
    fake.launch_kernels(4_800, 7, "burst").expect("launch");
    fake.set_kernels_pending(false);
    fake.finish_kernels().expect("finish");
    let (stats, _) = monitor.stop().expect("stop");
    assert_eq!(stats.dropped_records, 0, "{stats:?}");
    let profile = &stats.worker;
    assert!(
        profile.max_buffers_waiting * 8 > 64,
        "the burst must queue more than an eighth of the cap to test this: {profile:?}"
    );
    let digest = cupmon_records::digest::read_digest(
        &dir.path()
            .join("dump")
            .join(cupmon_records::dump::SEGMENTS_DIR),
        1,
    )
    .expect("the closed segment has a digest");
    assert!(digest.is_whole(), "skipped {} records", digest.skipped);
    assert_eq!(digest.records, stats.records);
    // The meta the monitor rewrote at the end still names the id the segment carries
    // (readers would otherwise take the id from the segments, or call them foreign).
    let meta = cupmon_records::MetaFile::read(
        dir.path()
            .join("dump")
            .join(cupmon_records::dump::META_FILE),
    )
    .expect("meta");
    let id = meta.dump_id().expect("the final meta keeps dump_id");
    assert_eq!(digest.dump_id, Some(id.to_string()));
}
