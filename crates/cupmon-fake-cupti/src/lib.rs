//! A fake libcupti for cupmon's tests (no GPU, no CUDA): exports the CUPTI
//! activity functions cupmon calls, under CUPTI's names and C signatures, and
//! behaves like CUPTI 13.0 (`cuptiGetVersion` = 130001, or the version
//! `CUPMON_FAKE_CUPTI_VERSION` names, whose layout its records then use): registered callbacks,
//! enabled kinds, runtime/driver per-call filters, per-thread external
//! correlation ids, buffers requested from the client, filled with records in
//! CUPTI 13.0's byte layout (encoded by `cupmon-records`), delivered from a
//! thread when full and synchronously by `cuptiActivityFlushAll`, and records
//! dropped and counted when the client has no buffer. Its callback API has one
//! subscriber, issues API callbacks at the enter and exit of every call the controls
//! make and resource callbacks for executable graphs (whose nodes it lists as the
//! driver would); a stall mode loses records uncounted until the client acts.
//!
//! Tests make activity with the `cupmonFake*` functions (see `controls`; the
//! interface is declared in `cupmon-fake-cupti-abi`), reached safely through
//! `cupmon-test-support`. Load it with `CUPMON_LIBCUPTI=path` and
//! `CUPMON_LIBCUDA=path` (it doubles as the driver).
//!
//! It does not link `cupmon-cupti`, the crate it fakes: its CUPTI declarations
//! are its own (`cupti_types`). Built as a cdylib, and as an rlib only so that
//! `cupmon-test-support` can depend on it and cargo builds the `.so` before the
//! tests that load it; nothing links the rlib.
#![allow(unsafe_code)]

mod api;
mod clock;
mod controls;
mod cupti_types;
mod delivery;
mod emit;
mod graphs;
mod memory;
mod names;
mod results;
mod state;
mod subscriber;

use std::sync::atomic::{AtomicU32, Ordering};

use cupmon_records::Layout;

/// What `cuptiGetVersion` returns by default: CUPTI 13.0 update 1, the fixtures'
/// version.
pub(crate) const FAKE_VERSION: u32 = 130_001;

/// The version the last `cuptiGetVersion` reported (see [`reported_version`]).
static VERSION: AtomicU32 = AtomicU32::new(FAKE_VERSION);

/// The API version to report: `CUPMON_FAKE_CUPTI_VERSION` when it is set to a
/// number, else [`FAKE_VERSION`]. Read at each `cuptiGetVersion`, which cupmon calls
/// once when it loads libcupti, so a test can load the fake under several versions.
pub(crate) fn reported_version() -> u32 {
    let version = std::env::var(cupmon_fake_cupti_abi::VERSION_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(FAKE_VERSION);
    VERSION.store(version, Ordering::Relaxed);
    version
}

/// The record layout of the version reported last, or CUPTI 13.0's for a version
/// cupmon-records does not know (cupmon must refuse those before reading a record).
pub(crate) fn layout() -> Layout {
    Layout::for_api_version(VERSION.load(Ordering::Relaxed))
        .or_else(|_| Layout::for_api_version(FAKE_VERSION))
        .expect("cupmon-records knows CUPTI 13.0")
}
