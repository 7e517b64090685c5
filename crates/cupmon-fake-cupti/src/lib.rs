//! A fake libcupti for cupmon's tests (no GPU, no CUDA): exports the CUPTI
//! activity functions cupmon calls, under CUPTI's names and C signatures, and
//! behaves like CUPTI 13.0 (`cuptiGetVersion` = 130001): registered callbacks,
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

use cupmon_records::Layout;

/// What `cuptiGetVersion` returns: CUPTI 13.0 update 1, the fixtures' version.
pub(crate) const FAKE_VERSION: u32 = 130_001;

/// The record layout of `FAKE_VERSION`.
pub(crate) fn layout() -> Layout {
    Layout::for_api_version(FAKE_VERSION).expect("cupmon-records knows CUPTI 13.0")
}
