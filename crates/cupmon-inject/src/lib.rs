//! cupmon's injection library (`libcupmon_inject.so`).
//!
//! - `InitializeInjection`: the CUDA driver calls it at `cuInit` when
//!   `CUDA_INJECTION64_PATH` names this library; it starts the monitor with
//!   settings from the `CUPMON_*` environment (see `cupmon_monitor::env_vars`),
//!   schedules trace windows, and flushes at exit, at `_exit`/`_Exit` (when
//!   preloaded, as under `cupmon run`) and on SIGTERM/SIGINT.
//! - `InitializeInjectionNvtx2`: NVTX calls it when `NVTX_INJECTION64_PATH` names
//!   this library (`cupmon run` sets it); NVTX ranges become annotations (`nvtx/`).
//! - `cupmon_call`: a JSON-in, JSON-out C ABI to the one monitor of the
//!   process, used by the Python module (and anything else in the process).
//!
//! Panics never cross the C boundary: every entry point catches them.
#![allow(unsafe_code)]

mod abi;
mod abi_error;
mod clients;
mod control;
mod entry;
mod exit;
mod exit_hooks;
pub mod interpose;
mod nvtx;
mod owner;
mod panics;
mod schedule;
mod session;
mod signals;

pub use abi::{call, cupmon_call, cupmon_free, ABI_VERSION};
pub use cupmon_error_code::ErrorCode;
pub use entry::InitializeInjection;
pub use nvtx::{InitializeInjectionNvtx2, NVTX_INJECTION_PATH_VAR};
pub use session::Session;
