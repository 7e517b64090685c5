//! Test support (feature `fake`): builds cupmon's fake libcupti (crate
//! `cupmon-fake-cupti`), loads it, and drives it through its `cupmonFake*`
//! control functions with safe wrappers, so tests without `unsafe` (the
//! monitor's) can generate activity.
//!
//! The fake keeps one global CUPTI state per process, like CUPTI: tests that use
//! it should hold [`exclusive`] and start with [`FakeControls::reset`].

use std::ffi::{c_char, CString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use crate::cupti::Cupti;
use crate::load::LoadOptions;
use crate::locate::SearchOptions;
use crate::raw::RawStatus;
use crate::{CuptiError, LoadError};

pub use crate::error::NotFakeError;

/// Counters of the fake, filled by `cupmonFakeStats`. Shared with the fake crate,
/// which writes this exact `repr(C)` struct.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FakeStats {
    /// Records written into buffers.
    pub records_emitted: u64,
    /// Records dropped for want of a buffer, in total (not reset by
    /// `cuptiActivityGetNumDroppedRecords`).
    pub records_dropped: u64,
    /// Buffer requests made to the client, and how many it refused (no buffer).
    pub buffers_requested: u64,
    pub buffers_refused: u64,
    /// Buffers handed back through the completion callback.
    pub buffers_delivered: u64,
    /// Full buffers waiting for the delivery thread or for pending kernels.
    pub buffers_waiting: u64,
    /// Buffers the fake allocated itself and passed to the completion callback.
    pub foreign_buffers_delivered: u64,
    pub flush_calls: u64,
    pub register_calls: u64,
    /// `cuptiFinalize` calls that reached the fake.
    pub finalize_calls: u64,
    /// Bit `k` set when activity kind `k` (< 64) is enabled.
    pub enabled_kinds: u64,
    /// The last `cuptiSetThreadIdType` value.
    pub thread_id_type: u64,
    /// Kernels launched while "pending" and not finished yet.
    pub pending_kernels: u64,
}

/// The fake's control functions, resolved from the loaded library.
#[derive(Debug, Clone, Copy)]
pub struct FakeControls {
    launch_kernels: unsafe extern "C" fn(u32, u32, *const c_char) -> RawStatus,
    memcpy: unsafe extern "C" fn(u32, u64, u32, u32) -> RawStatus,
    memset: unsafe extern "C" fn(u32, u64, u32, u32) -> RawStatus,
    runtime_call: unsafe extern "C" fn(u32) -> RawStatus,
    driver_call: unsafe extern "C" fn(u32) -> RawStatus,
    set_completion_delay_us: unsafe extern "C" fn(u64),
    set_kernels_pending: unsafe extern "C" fn(u32),
    finish_kernels: unsafe extern "C" fn() -> RawStatus,
    deliver_foreign_buffer: unsafe extern "C" fn() -> RawStatus,
    stats: unsafe extern "C" fn(*mut FakeStats, usize) -> RawStatus,
    reset: unsafe extern "C" fn(),
    cupti: &'static Cupti,
}

impl Cupti {
    /// The fake's control functions, if this library is cupmon's fake libcupti.
    pub fn fake(&'static self) -> Result<FakeControls, NotFakeError> {
        macro_rules! control {
            ($name:literal) => {
                // SAFETY: the fake crate exports each `cupmonFake*` function with the
                // signature of the matching field (checked by its own tests through
                // these wrappers); the library is never unloaded.
                unsafe { self.raw_symbol($name) }.ok_or_else(|| NotFakeError {
                    path: self.path().to_path_buf(),
                    symbol: $name,
                })?
            };
        }
        Ok(FakeControls {
            launch_kernels: control!("cupmonFakeLaunchKernels"),
            memcpy: control!("cupmonFakeMemcpy"),
            memset: control!("cupmonFakeMemset"),
            runtime_call: control!("cupmonFakeRuntimeCall"),
            driver_call: control!("cupmonFakeDriverCall"),
            set_completion_delay_us: control!("cupmonFakeSetCompletionDelayUs"),
            set_kernels_pending: control!("cupmonFakeSetKernelsPending"),
            finish_kernels: control!("cupmonFakeFinishKernels"),
            deliver_foreign_buffer: control!("cupmonFakeDeliverForeignBuffer"),
            stats: control!("cupmonFakeStats"),
            reset: control!("cupmonFakeReset"),
            cupti: self,
        })
    }
}

impl FakeControls {
    /// `count` launches of kernel `name` on `stream_id`: each a RUNTIME
    /// `cudaLaunchKernel` record (preceded by external-correlation records for the
    /// ids pushed on this thread) and a CONCURRENT_KERNEL (or KERNEL) record, as far
    /// as those kinds are enabled. The name is interned by the fake: every launch of
    /// one name carries the same pointer, as with CUPTI.
    pub fn launch_kernels(&self, count: u32, stream_id: u32, name: &str) -> Result<(), CuptiError> {
        let name = CString::new(name).expect("kernel name without NUL bytes");
        // SAFETY: `name` is a valid NUL-terminated string for the duration of the
        // call; the fake copies it.
        let status = unsafe { (self.launch_kernels)(count, stream_id, name.as_ptr()) };
        self.cupti.check(status, "cupmonFakeLaunchKernels", None)
    }

    /// `count` `cudaMemcpyAsync` calls of `bytes` each (`copy_kind`: CUPTI's
    /// `CUpti_ActivityMemcpyKind`, 1 = HtoD).
    pub fn memcpy(
        &self,
        count: u32,
        bytes: u64,
        copy_kind: u32,
        stream_id: u32,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.memcpy)(count, bytes, copy_kind, stream_id) };
        self.cupti.check(status, "cupmonFakeMemcpy", None)
    }

    /// `count` `cudaMemsetAsync` calls of `bytes` each, setting `value`.
    pub fn memset(
        &self,
        count: u32,
        bytes: u64,
        value: u32,
        stream_id: u32,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.memset)(count, bytes, value, stream_id) };
        self.cupti.check(status, "cupmonFakeMemset", None)
    }

    /// One runtime API call with callback id `cbid` (a RUNTIME record if enabled for it).
    pub fn runtime_call(&self, cbid: u32) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.runtime_call)(cbid) };
        self.cupti
            .check(status, "cupmonFakeRuntimeCall", Some(cbid.to_string()))
    }

    /// One driver API call with callback id `cbid` (a DRIVER record if enabled for it).
    pub fn driver_call(&self, cbid: u32) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.driver_call)(cbid) };
        self.cupti
            .check(status, "cupmonFakeDriverCall", Some(cbid.to_string()))
    }

    /// Makes the fake's delivery thread wait this long before each full buffer it
    /// completes: buffers pile up with the client, as with a slow CUPTI thread or
    /// consumer. Flushes are not delayed.
    pub fn set_completion_delay(&self, delay: Duration) {
        // SAFETY: plain value.
        unsafe { (self.set_completion_delay_us)(delay.as_micros().try_into().unwrap_or(u64::MAX)) }
    }

    /// While on, launched kernels stay unfinished: a plain flush holds back their
    /// buffers, a forced flush delivers them with `end = 0`, as CUPTI does.
    pub fn set_kernels_pending(&self, pending: bool) {
        // SAFETY: plain value.
        unsafe { (self.set_kernels_pending)(u32::from(pending)) }
    }

    /// Finishes every pending kernel (gives it an end time).
    pub fn finish_kernels(&self) -> Result<(), CuptiError> {
        // SAFETY: no arguments.
        let status = unsafe { (self.finish_kernels)() };
        self.cupti.check(status, "cupmonFakeFinishKernels", None)
    }

    /// Passes a buffer the fake allocated itself to the registered completion
    /// callback (what another CUPTI client's buffers look like), then frees it.
    pub fn deliver_foreign_buffer(&self) -> Result<(), CuptiError> {
        // SAFETY: no arguments; the fake owns and frees the buffer.
        let status = unsafe { (self.deliver_foreign_buffer)() };
        self.cupti
            .check(status, "cupmonFakeDeliverForeignBuffer", None)
    }

    pub fn stats(&self) -> FakeStats {
        let mut stats = FakeStats::default();
        // SAFETY: the fake writes at most `size` bytes of this repr(C) struct.
        let status = unsafe { (self.stats)(&mut stats, size_of::<FakeStats>()) };
        assert_eq!(status, 0, "cupmonFakeStats failed");
        stats
    }

    /// Force-flushes what the fake holds to the registered client, then clears
    /// enabled kinds, filters, thread-id type, dropped counts, delay, pending
    /// kernels and statistics. The registered callbacks stay.
    pub fn reset(&self) {
        // SAFETY: no arguments.
        unsafe { (self.reset)() }
    }
}

/// Serialises tests that use the fake's process-global state. Poisoning (a
/// failed test) is ignored: the next test resets the fake anyway.
pub fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The fake loaded as this process's libcupti (and as its driver stand-in), with
/// its controls. Builds the fake on first use and installs it as the
/// process-global instance, so code calling [`Cupti::load`] gets it without any
/// environment variable (panics if a real libcupti was loaded first).
pub fn load_fake() -> (&'static Cupti, FakeControls) {
    static LOADED: OnceLock<(&'static Cupti, FakeControls)> = OnceLock::new();
    *LOADED.get_or_init(|| {
        let fake = Cupti::load_with(&fake_load_options())
            .unwrap_or_else(|e| panic!("loading the fake: {e}"));
        let cupti = Cupti::install_global(fake);
        let controls = cupti.fake().unwrap_or_else(|e| panic!("{e}"));
        (cupti, controls)
    })
}

/// Options that load the fake: `CUPMON_LIBCUPTI` and `CUPMON_LIBCUDA` pointed at it.
pub fn fake_load_options() -> LoadOptions {
    let path = fake_library_path().to_path_buf();
    LoadOptions {
        search: SearchOptions {
            explicit: Some(path.clone()),
            ..SearchOptions::default()
        },
        libcuda: Some(path),
    }
}

/// Loads without the process-global instance; for tests of load errors.
pub fn try_load(options: &LoadOptions) -> Result<&'static Cupti, LoadError> {
    Cupti::load_with(options)
}

/// Path of the fake's `.so`, built on first call with `cargo build -p
/// cupmon-fake-cupti` in this workspace (same target directory and cargo as the
/// running build). Panics with cargo's output when the build fails.
pub fn fake_library_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(build_fake)
}

fn build_fake() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let output = Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "-p",
            "cupmon-fake-cupti",
            "--message-format=json-render-diagnostics",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", env!("CARGO")));
    assert!(
        output.status.success(),
        "cargo build -p cupmon-fake-cupti failed"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact"
                && message["target"]["name"] == "cupmon_fake_cupti"
        })
        .flat_map(|message| message["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|name| name.as_str().map(PathBuf::from))
        .find(|path| path.extension().is_some_and(|ext| ext == "so"))
        .expect("cargo reported no cupmon_fake_cupti .so")
}
