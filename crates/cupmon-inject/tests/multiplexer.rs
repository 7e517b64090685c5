//! The CUPTI multiplexer against the fake libcupti, with simulated clients
//! calling the interposed entry points as Kineto would.
#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::sync::Mutex;

use cupmon_inject::interpose::{
    cuptiActivityDisable, cuptiActivityEnable, cuptiActivityFlushAll,
    cuptiActivityRegisterCallbacks, cuptiActivityRegisterTimestampCallback, cuptiFinalize,
};
use cupmon_records::{Layout, Record, RecordIter};
use cupmon_test_support::{exclusive, load_fake};

/// What a client received: kind name -> records, and the kernel start times.
#[derive(Debug, Default)]
struct Received {
    by_kind: BTreeMap<&'static str, usize>,
    kernel_starts: Vec<u64>,
    buffers: usize,
}

static CLIENT_A: Mutex<Option<Received>> = Mutex::new(None);
static CLIENT_B: Mutex<Option<Received>> = Mutex::new(None);

const BUFFER: usize = 64 << 10;

unsafe extern "C" fn request(buffer: *mut *mut u8, size: *mut usize, max: *mut usize) {
    let memory = Box::leak(vec![0u64; BUFFER / 8].into_boxed_slice());
    // SAFETY: CUPTI's contract: valid out-pointers.
    unsafe {
        *buffer = memory.as_mut_ptr().cast();
        *size = BUFFER;
        *max = 0;
    }
}

fn receive(into: &Mutex<Option<Received>>, buffer: *mut u8, valid: usize) {
    // SAFETY: the buffer is one of ours from `request`, `valid` bytes written.
    let bytes = unsafe { std::slice::from_raw_parts(buffer, valid) };
    let mut guard = into.lock().unwrap_or_else(|p| p.into_inner());
    let received = guard.get_or_insert_with(Received::default);
    received.buffers += 1;
    for record in RecordIter::new(bytes, Layout::cupti_13_0()) {
        let record = record.expect("the client gets whole records");
        *received
            .by_kind
            .entry(record.kind().name().unwrap_or("?"))
            .or_default() += 1;
        if let Record::Kernel(k) = record {
            received.kernel_starts.push(k.start);
        }
    }
}

unsafe extern "C" fn complete_a(
    _: *mut std::ffi::c_void,
    _: u32,
    buffer: *mut u8,
    _: usize,
    valid: usize,
) {
    receive(&CLIENT_A, buffer, valid);
}

unsafe extern "C" fn complete_b(
    _: *mut std::ffi::c_void,
    _: u32,
    buffer: *mut u8,
    _: usize,
    valid: usize,
) {
    receive(&CLIENT_B, buffer, valid);
}

/// A client clock: twice the Unix time.
unsafe extern "C" fn double_clock() -> u64 {
    2 * std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn take(client: &Mutex<Option<Received>>) -> Received {
    client
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or_default()
}

/// Start cupmon's session through the C ABI, its dump in `dir/dump`.
fn start_session(dir: &std::path::Path) {
    call(&format!(
        r#"{{"op":"start","output_dir":"{}"}}"#,
        dir.join("dump").display()
    ));
}

fn call(request: &str) -> serde_json::Value {
    let answer = cupmon_inject::call(request);
    assert_eq!(answer["ok"], true, "{request}: {answer}");
    answer["result"].clone()
}

#[test]
fn clients_get_their_kinds_cupmon_keeps_everything() {
    let _guard = exclusive();
    let (_cupti, fake) = load_fake();
    fake.reset();
    let dir = tempfile::tempdir().expect("tempdir");
    start_session(dir.path());

    // Client A: Kineto-like. Its registration is kept by cupmon, not passed on.
    let registers_before = fake.stats().register_calls;
    // SAFETY: valid CUPTI callbacks.
    assert_eq!(
        unsafe { cuptiActivityRegisterCallbacks(request, complete_a) },
        0
    );
    assert_eq!(
        fake.stats().register_calls,
        registers_before,
        "cupmon keeps the one registration"
    );
    assert_eq!(cuptiActivityEnable(5), 0); // RUNTIME
    assert_eq!(cuptiActivityEnable(10), 0); // CONCURRENT_KERNEL (cupmon has it on too)
    fake.launch_kernels(10, 7, "k").expect("launch");
    assert_eq!(cuptiActivityFlushAll(0), 0);
    let a = take(&CLIENT_A);
    assert_eq!(a.by_kind.get("CONCURRENT_KERNEL"), Some(&10), "{a:?}");
    assert_eq!(a.by_kind.get("RUNTIME"), Some(&10), "{a:?}");

    // A client's disable removes only its own interest: cupmon keeps kernels.
    assert_eq!(cuptiActivityDisable(10), 0);
    fake.launch_kernels(5, 7, "k").expect("launch");
    assert_eq!(cuptiActivityFlushAll(1), 0);
    let a = take(&CLIENT_A);
    assert_eq!(a.by_kind.get("CONCURRENT_KERNEL"), None, "{a:?}");
    assert_eq!(a.by_kind.get("RUNTIME"), Some(&5), "{a:?}");

    // Finalize is swallowed; the client's kinds are released.
    let finalizes = fake.stats().finalize_calls;
    assert_eq!(cuptiFinalize(), 0);
    assert_eq!(fake.stats().finalize_calls, finalizes);

    // Client B, with its own clock: memcpy records, kernel times in its clock.
    // SAFETY: valid CUPTI callbacks.
    assert_eq!(
        unsafe { cuptiActivityRegisterCallbacks(request, complete_b) },
        0
    );
    assert_eq!(
        cuptiActivityRegisterTimestampCallback(Some(double_clock)),
        0
    );
    assert_eq!(cuptiActivityEnable(10), 0);
    fake.launch_kernels(3, 7, "k").expect("launch");
    fake.memcpy(2, 64, 1, 7).expect("memcpy");
    assert_eq!(cuptiActivityFlushAll(1), 0);
    let b = take(&CLIENT_B);
    assert_eq!(b.by_kind.get("CONCURRENT_KERNEL"), Some(&3), "{b:?}");
    assert_eq!(
        b.by_kind.get("MEMCPY"),
        None,
        "B did not enable MEMCPY: {b:?}"
    );
    let unix_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    for start in &b.kernel_starts {
        let ratio = *start as f64 / unix_now as f64;
        assert!(
            (1.99..2.01).contains(&ratio),
            "start {start} is not in the client's clock"
        );
    }
    assert!(
        take(&CLIENT_A).by_kind.is_empty(),
        "A finalized and gets nothing"
    );

    // Withheld API records: a window that brings its own runtime calls.
    assert_eq!(cuptiActivityEnable(5), 0);
    call(r#"{"op":"start_window","withhold_api_from_clients":true}"#);
    fake.launch_kernels(4, 7, "k").expect("launch");
    let window = call(r#"{"op":"end_window"}"#);
    // The client's records arrive when it flushes (its last buffer stays open until then).
    assert_eq!(cuptiActivityFlushAll(0), 0);
    let b = take(&CLIENT_B);
    assert_eq!(b.by_kind.get("RUNTIME"), None, "{b:?}");
    assert_eq!(b.by_kind.get("CONCURRENT_KERNEL"), Some(&4), "{b:?}");
    let runtime = window["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "cuda_runtime")
        .count();
    assert_eq!(runtime, 4, "the window has them");

    // cupmon's own dump has every kernel, whoever else was listening.
    let stats = call(r#"{"op":"stop"}"#);
    assert_eq!(stats["records_by_kind"]["CONCURRENT_KERNEL"], 22, "{stats}");
    assert_eq!(stats["dropped_records"], 0);
}

#[test]
fn rearm_takes_the_callbacks_back_from_a_client_that_took_them() {
    let _guard = exclusive();
    let (cupti, fake) = load_fake();
    fake.reset();
    let dir = tempfile::tempdir().expect("tempdir");
    start_session(dir.path());
    take(&CLIENT_A);
    // Another client registers with the real CUPTI (no LD_PRELOAD): it now gets the buffers.
    // SAFETY: valid CUPTI callbacks, registered through the real entry point.
    unsafe { (cupti.raw().activity_register_callbacks)(request, complete_a) };
    fake.launch_kernels(20, 7, "k").expect("launch");
    cupti
        .flush_all(cupmon_cupti::FlushFlag::FORCED)
        .expect("flush");
    assert_eq!(take(&CLIENT_A).by_kind.get("CONCURRENT_KERNEL"), Some(&20));
    // cupmon takes them back; what follows is cupmon's again.
    let held = call(r#"{"op":"rearm"}"#);
    assert!(held["buffers_held_by_cupti"].is_u64());
    fake.launch_kernels(5, 7, "k").expect("launch");
    let stats = call(r#"{"op":"stop"}"#);
    assert_eq!(stats["records_by_kind"]["CONCURRENT_KERNEL"], 5, "{stats}");
}

static SUBSCRIBER_CALLS: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());

unsafe extern "C" fn kineto_like_callback(
    _: *mut std::ffi::c_void,
    domain: u32,
    cbid: u32,
    _: *const std::ffi::c_void,
) {
    SUBSCRIBER_CALLS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((domain, cbid));
}

#[test]
fn a_callback_subscriber_keeps_its_callbacks_beside_cupmons_launch_counter() {
    use cupmon_inject::interpose::{
        cuptiEnableCallback, cuptiEnableDomain, cuptiGetCallbackState, cuptiSubscribe,
        cuptiUnsubscribe,
    };
    let _guard = exclusive();
    let (_cupti, fake) = load_fake();
    fake.reset();
    let dir = tempfile::tempdir().expect("tempdir");
    // As under `cupmon run`, where this library is preloaded: the test calls the
    // interposed entry points itself.
    cupmon_inject::interpose::ASSUME_INTERPOSED.store(true, std::sync::atomic::Ordering::Relaxed);
    start_session(dir.path());
    // Kineto subscribes after cupmon: with CUPTI 13.0 alone it would be refused.
    let mut handle = std::ptr::null_mut();
    // SAFETY: a valid out-pointer and a callback with CUPTI's signature.
    let status = unsafe {
        cuptiSubscribe(
            &mut handle,
            Some(kineto_like_callback),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(
        status, 0,
        "the client is served through cupmon's subscription"
    );
    SUBSCRIBER_CALLS.lock().unwrap().clear();
    // SAFETY: the handle cuptiSubscribe gave.
    assert_eq!(unsafe { cuptiEnableCallback(1, handle, 3, 18) }, 0); // graph exec created
                                                                     // SAFETY: as above.
    assert_eq!(unsafe { cuptiEnableDomain(1, handle, 2) }, 0); // every runtime call
    let mut on = 0;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { cuptiGetCallbackState(&mut on, handle, 2, 211) }, 0);
    assert_eq!(on, 1);
    let exec = fake.graph_instantiate(5, 0, false).expect("graph");
    fake.launch_kernels(4, 1, "k").expect("launch");
    fake.graph_launch(exec, 1, 1, "g").expect("graph launch");
    let calls = std::mem::take(&mut *SUBSCRIBER_CALLS.lock().unwrap());
    assert_eq!(
        calls.iter().filter(|&&c| c == (3, 18)).count(),
        1,
        "{calls:?}"
    );
    assert_eq!(
        calls.iter().filter(|&&c| c == (2, 211)).count(),
        8,
        "{calls:?}"
    );
    assert_eq!(
        calls.iter().filter(|&&c| c == (2, 311)).count(),
        2,
        "{calls:?}"
    );
    // SAFETY: as above.
    assert_eq!(unsafe { cuptiUnsubscribe(handle) }, 0);
    let stats = call(r#"{"op":"stop"}"#);
    assert_eq!(stats["kernels_launched"], 4 + 5, "{stats}");
    assert_eq!(stats["kernels_unaccounted"], 0, "{stats}");
    fake.graph_destroy(exec).expect("destroy");
    cupmon_inject::interpose::ASSUME_INTERPOSED.store(false, std::sync::atomic::Ordering::Relaxed);
}

#[test]
fn without_the_preload_cupmon_leaves_cuptis_one_callback_subscriber_to_torch_profiler() {
    // The Python API without `cupmon run`: cupmon counting launches would take CUPTI's
    // one subscriber (before 13.3), and torch.profiler's cuptiSubscribe would fail.
    let _guard = exclusive();
    let (_cupti, fake) = load_fake();
    fake.reset();
    let dir = tempfile::tempdir().expect("tempdir");
    start_session(dir.path());
    fake.launch_kernels(3, 1, "k").expect("launch");
    let stats = call(r#"{"op":"stop"}"#);
    assert_eq!(
        stats["kernels_launched"],
        serde_json::Value::Null,
        "{stats}"
    );
    let why = stats["launches_not_counted"].as_str().unwrap_or_default();
    assert!(
        why.contains("not preloaded") && why.contains("cupmon run"),
        "{stats}"
    );
    assert_eq!(stats["kernels_recorded"], 3, "{stats}");
}
