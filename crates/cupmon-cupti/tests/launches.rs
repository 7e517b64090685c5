//! The launch counter against the fake libcupti: eager launches through the runtime
//! and the driver, graph launches counted by their kernel nodes, failed launches,
//! a second subscriber, and another client served through cupmon's subscription.

// The client side of the callback API is C: a subscriber callback and raw handles.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use cupmon_cupti::launches::{self, ids};
use cupmon_cupti::{launch_counting, launch_counts, ActivityKind, Counting, FlushFlag};
use cupmon_test_support::cbid;

use crate::common::session;

#[test]
fn eager_launches_are_counted_to_the_kernel() {
    let s = session();
    s.cupti.start_counting_launches().unwrap();
    assert!(matches!(launch_counting(), Counting::On { .. }));
    let before = launch_counts();
    s.fake.launch_kernels(1234, 1, "eager").unwrap();
    s.fake
        .launch_kernels_via(1, cbid::DRIVER_LAUNCH_KERNEL, 56, 1, "driver", 0)
        .unwrap();
    // A launch that fails runs nothing, and counts nothing.
    s.fake
        .launch_kernels_via(2, cbid::RUNTIME_LAUNCH_KERNEL, 7, 1, "failed", 1)
        .unwrap();
    let counted = launch_counts().since(&before);
    assert_eq!(counted.kernels, 1234 + 56);
    assert_eq!(counted.graph_launches, 0);
}

#[test]
fn launches_captured_into_a_graph_run_nothing_and_count_nothing() {
    let s = session();
    s.cupti.start_counting_launches().unwrap();
    let before = launch_counts();
    s.fake.launch_kernels(3, 1, "before").unwrap();
    let issued = s.fake.stats().callbacks_issued;
    s.fake.capture_kernels(1, 1).unwrap();
    assert_eq!(
        s.fake.stats().callbacks_issued - issued,
        3,
        "enter, node created, exit"
    );
    s.fake.capture_kernels(511, 1).unwrap();
    s.fake.launch_kernels(4, 1, "after").unwrap();
    assert_eq!(launch_counts().since(&before).kernels, 7);
}

#[test]
fn graph_launches_count_the_kernel_nodes_of_their_graph() {
    let s = session();
    s.cupti.start_counting_launches().unwrap();
    s.cupti.enable(ActivityKind::CONCURRENT_KERNEL).unwrap();
    let flat = s.fake.graph_instantiate(512, 0, false).unwrap();
    let nested = s.fake.graph_instantiate(3, 4, false).unwrap();
    let before = launch_counts();
    s.fake.graph_launch(flat, 10, 1, "g").unwrap();
    s.fake.graph_launch(nested, 5, 1, "g").unwrap();
    let counted = launch_counts().since(&before);
    assert_eq!(counted.graph_launches, 15);
    assert_eq!(counted.kernels, 10 * 512 + 5 * 7);
    assert_eq!(counted.graph_kernels, counted.kernels);
    assert_eq!(counted.unsized_graph_launches, 0);
    s.cupti.flush_all(FlushFlag::FORCED).unwrap();
    let recorded = crate::common::decode(&s.sink.take())
        .iter()
        .filter(|r| matches!(r, cupmon_records::Record::Kernel(_)))
        .count() as u64;
    assert_eq!(
        recorded, counted.kernels,
        "the fake ran what the graphs hold"
    );
    s.fake.graph_destroy(flat).unwrap();
    s.fake.graph_destroy(nested).unwrap();
}

#[test]
fn graphs_whose_kernels_cannot_be_counted_make_the_count_a_lower_bound() {
    let s = session();
    s.cupti.stop_counting_launches();
    // Instantiated while cupmon did not count: never sized.
    let early = s.fake.graph_instantiate(8, 0, false).unwrap();
    s.cupti.start_counting_launches().unwrap();
    let conditional = s.fake.graph_instantiate(2, 0, true).unwrap();
    let before = launch_counts();
    s.fake.graph_launch(early, 3, 1, "g").unwrap();
    s.fake.graph_launch(conditional, 2, 1, "g").unwrap();
    let counted = launch_counts().since(&before);
    assert_eq!(counted.graph_launches, 5);
    assert_eq!(counted.unsized_graph_launches, 5);
    assert_eq!(counted.kernels, 0);
}

#[test]
fn launches_while_counting_is_off_are_not_counted() {
    let s = session();
    s.cupti.start_counting_launches().unwrap();
    s.cupti.stop_counting_launches();
    let before = launch_counts();
    let issued = s.fake.stats().callbacks_issued;
    s.fake.launch_kernels(100, 1, "off").unwrap();
    assert_eq!(launch_counts().since(&before).kernels, 0);
    assert_eq!(
        s.fake.stats().callbacks_issued,
        issued,
        "the launch callbacks are turned off, not ignored"
    );
    s.cupti.start_counting_launches().unwrap();
}

#[test]
fn a_second_real_subscriber_is_refused_while_cupmon_subscribes() {
    let s = session();
    s.cupti.start_counting_launches().unwrap();
    let subscribe = s.cupti.raw().subscribe.unwrap();
    let mut handle = std::ptr::null_mut();
    // SAFETY: a valid out-pointer and a callback with CUPTI's signature.
    let status = unsafe { subscribe(&mut handle, Some(client_callback), std::ptr::null_mut()) };
    assert_eq!(status, 39, "CUPTI 13.0 allows one subscriber");
}

static CLIENT_CALLS: AtomicU64 = AtomicU64::new(0);
static CLIENT_GRAPH_EXECS: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" fn client_callback(_: *mut c_void, domain: u32, cbid: u32, _: *const c_void) {
    CLIENT_CALLS.fetch_add(1, Ordering::SeqCst);
    if domain == ids::DOMAIN_RESOURCE && cbid == ids::RESOURCE_GRAPHEXEC_CREATED {
        CLIENT_GRAPH_EXECS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_client_subscribed_through_cupmon_gets_the_callbacks_it_enabled() {
    let s = session();
    s.cupti.start_counting_launches().unwrap();
    let mut handle = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    let status = unsafe {
        s.cupti
            .subscribe_client(&mut handle, Some(client_callback), std::ptr::null_mut())
    };
    assert_eq!(status, Some(0));
    assert!(launches::is_client_handle(handle));
    CLIENT_CALLS.store(0, Ordering::SeqCst);
    CLIENT_GRAPH_EXECS.store(0, Ordering::SeqCst);
    // Only what it enabled: the graph-exec callback, not the launches cupmon counts.
    let resource = ids::DOMAIN_RESOURCE;
    assert_eq!(
        launches::client_enable_callback(handle, 1, resource, ids::RESOURCE_GRAPHEXEC_CREATED),
        Some(0)
    );
    s.fake.launch_kernels(10, 1, "k").unwrap();
    assert_eq!(CLIENT_CALLS.load(Ordering::SeqCst), 0);
    let before = launch_counts();
    let exec = s.fake.graph_instantiate(4, 0, false).unwrap();
    assert_eq!(CLIENT_GRAPH_EXECS.load(Ordering::SeqCst), 1);
    // Enabling the runtime domain whole brings every runtime call, enter and exit.
    assert_eq!(
        launches::client_enable_domain(handle, 1, ids::DOMAIN_RUNTIME_API),
        Some(0)
    );
    assert_eq!(
        launches::client_callback_state(handle, ids::DOMAIN_RUNTIME_API, 211),
        Some(Ok(true))
    );
    s.fake.graph_launch(exec, 2, 1, "g").unwrap();
    s.fake.runtime_call(cbid::RUNTIME_MALLOC).unwrap_or(());
    assert_eq!(CLIENT_CALLS.load(Ordering::SeqCst), 1 + 2 * 2 + 2);
    assert_eq!(
        launch_counts().since(&before).kernels,
        8,
        "cupmon counts on"
    );
    assert_eq!(launches::unsubscribe_client(handle), Some(0));
    assert!(!launches::is_client_handle(handle));
    s.fake.graph_launch(exec, 1, 1, "g").unwrap();
    assert_eq!(
        CLIENT_CALLS.load(Ordering::SeqCst),
        7,
        "nothing after unsubscribing"
    );
    s.fake.graph_destroy(exec).unwrap();
}

#[test]
fn cuptis_own_settings_reach_cupti() {
    let s = session();
    s.cupti.set_flush_period(250).unwrap();
    s.cupti.set_device_buffer_size(8 << 20).unwrap();
    s.cupti.set_device_buffer_pool_limit(1000).unwrap();
    let stats = s.fake.stats();
    assert_eq!(stats.flush_period_ms, 250);
    assert_eq!(stats.device_buffer_size, 8 << 20);
    assert_eq!(stats.device_buffer_pool_limit, 1000);
}
