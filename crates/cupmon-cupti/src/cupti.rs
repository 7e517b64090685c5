//! [`Cupti`]: the loaded library and one safe wrapper per CUPTI call.

use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};
use std::ptr;

use libloading::Library;

use crate::constants::{
    ActivityKind, CuptiStatus, ExternalCorrelationKind, FlushFlag, ThreadIdType,
};
use crate::error::CuptiError;
use crate::raw::{self, RawApi, RawContext, RawStatus};

/// A loaded libcupti. Obtain it with [`Cupti::load`]; it lives for the rest of the
/// process (`&'static`), as CUPTI itself does.
#[derive(Debug)]
pub struct Cupti {
    library: &'static Library,
    raw: RawApi,
    path: PathBuf,
    version: u32,
    /// The driver library the driver check loaded (`None`: `libcuda.so.1`).
    libcuda: Option<PathBuf>,
}

impl Cupti {
    pub(crate) fn new(
        library: &'static Library,
        raw: RawApi,
        path: PathBuf,
        libcuda: Option<PathBuf>,
    ) -> Result<Self, CuptiError> {
        let mut cupti = Cupti {
            library,
            raw,
            path,
            version: 0,
            libcuda,
        };
        let mut version = 0u32;
        // SAFETY: cuptiGetVersion writes one uint32_t through a valid pointer. It is
        // the first CUPTI call, made only after the driver check.
        let status = unsafe { (raw.get_version)(&mut version) };
        cupti.check(status, "cuptiGetVersion", None)?;
        cupti.version = version;
        Ok(cupti)
    }

    /// The file libcupti was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The driver library cupmon checked for (`None`: the loader's `libcuda.so.1`).
    pub fn libcuda(&self) -> Option<&Path> {
        self.libcuda.as_deref()
    }

    /// `cuptiGetVersion`: CUPTI's API version, e.g. 130001 for CUPTI 13.0.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The raw entry points, for the injection library's interposers. See [`raw`].
    pub fn raw(&self) -> &RawApi {
        &self.raw
    }

    /// Looks up any other symbol of this libcupti (from its handle, not the global
    /// scope).
    ///
    /// # Safety
    /// `T` must be the function-pointer type matching the symbol's C declaration.
    pub unsafe fn raw_symbol<T: Copy>(&self, name: &str) -> Option<T> {
        // SAFETY: the caller guarantees the type; the library is never unloaded.
        unsafe { raw::optional_symbol(self.library, name) }
    }

    /// `cuptiGetResultString`: CUPTI's name for a status, e.g. `CUPTI_ERROR_NOT_INITIALIZED`.
    pub fn result_string(&self, status: CuptiStatus) -> Option<String> {
        call_string(self.raw.get_result_string, status)
    }

    /// `cuptiGetErrorMessage` (newer CUPTI only): a sentence explaining a status.
    pub fn error_message(&self, status: CuptiStatus) -> Option<String> {
        call_string(self.raw.get_error_message?, status)
    }

    /// Turn `kind` on for cupmon (`cuptiActivityEnable` unless another
    /// client already has it on; see [`crate::Owner`]).
    pub fn enable(&self, kind: ActivityKind) -> Result<(), CuptiError> {
        self.enable_for(crate::Owner::Cupmon, kind)
    }

    /// Turn `kind` off for cupmon; it stays on while another client wants it.
    pub fn disable(&self, kind: ActivityKind) -> Result<(), CuptiError> {
        self.disable_for(crate::Owner::Cupmon, kind)
    }

    /// `cuptiActivityEnable`, bypassing the interest registry.
    pub(crate) fn enable_raw(&self, kind: ActivityKind) -> Result<(), CuptiError> {
        // SAFETY: takes an enum value by value; CUPTI validates it.
        let status = unsafe { (self.raw.activity_enable)(kind.0) };
        self.check(status, "cuptiActivityEnable", Some(kind.to_string()))
    }

    /// `cuptiActivityDisable`, bypassing the interest registry.
    pub(crate) fn disable_raw(&self, kind: ActivityKind) -> Result<(), CuptiError> {
        // SAFETY: takes an enum value by value; CUPTI validates it.
        let status = unsafe { (self.raw.activity_disable)(kind.0) };
        self.check(status, "cuptiActivityDisable", Some(kind.to_string()))
    }

    /// `cuptiActivityEnableContext`.
    ///
    /// # Safety
    /// `context` must be a live `CUcontext` of this process.
    pub unsafe fn enable_context(
        &self,
        context: RawContext,
        kind: ActivityKind,
    ) -> Result<(), CuptiError> {
        let Some(function) = self.raw.activity_enable_context else {
            return Err(self.missing("cuptiActivityEnableContext", Some(kind.to_string())));
        };
        // SAFETY: the caller guarantees `context` is a live context.
        let status = unsafe { function(context, kind.0) };
        self.check(status, "cuptiActivityEnableContext", Some(kind.to_string()))
    }

    /// `cuptiActivityDisableContext`.
    ///
    /// # Safety
    /// `context` must be a live `CUcontext` of this process.
    pub unsafe fn disable_context(
        &self,
        context: RawContext,
        kind: ActivityKind,
    ) -> Result<(), CuptiError> {
        let Some(function) = self.raw.activity_disable_context else {
            return Err(self.missing("cuptiActivityDisableContext", Some(kind.to_string())));
        };
        // SAFETY: the caller guarantees `context` is a live context.
        let status = unsafe { function(context, kind.0) };
        self.check(
            status,
            "cuptiActivityDisableContext",
            Some(kind.to_string()),
        )
    }

    /// `cuptiActivityFlushAll`. Completed buffers reach the sink before this returns.
    pub fn flush_all(&self, flag: FlushFlag) -> Result<(), CuptiError> {
        // SAFETY: takes a flag by value. Completion callbacks run on this thread
        // meanwhile; the trampolines take no lock that a caller of this holds.
        let status = unsafe { (self.raw.activity_flush_all)(flag.0) };
        self.check(status, "cuptiActivityFlushAll", Some(flag.to_string()))
    }

    /// `cuptiActivityGetNumDroppedRecords(NULL, stream_id)`: records dropped from the
    /// global queue since the last call (the count resets).
    pub fn dropped_records(&self, stream_id: u32) -> Result<u64, CuptiError> {
        // SAFETY: a null context selects the global queue, which CUPTI documents.
        unsafe { self.dropped_records_in(ptr::null_mut(), stream_id) }
    }

    /// `cuptiActivityGetNumDroppedRecords` for a context CUPTI gave cupmon.
    ///
    /// # Safety
    /// `context` must be null or a context CUPTI reported (e.g. in a completion callback).
    pub(crate) unsafe fn dropped_records_in(
        &self,
        context: RawContext,
        stream_id: u32,
    ) -> Result<u64, CuptiError> {
        let mut dropped = 0usize;
        // SAFETY: writes one size_t through a valid pointer; the caller vouches
        // for the context.
        let status = unsafe {
            (self.raw.activity_get_num_dropped_records)(context, stream_id, &mut dropped)
        };
        self.check(status, "cuptiActivityGetNumDroppedRecords", None)?;
        Ok(dropped as u64)
    }

    /// `cuptiActivityEnableRuntimeApi`: per-call override of the RUNTIME kind.
    pub fn enable_runtime_api(&self, cbid: u32, enable: bool) -> Result<(), CuptiError> {
        let Some(function) = self.raw.activity_enable_runtime_api else {
            return Err(self.missing("cuptiActivityEnableRuntimeApi", Some(cbid.to_string())));
        };
        // SAFETY: plain values; CUPTI validates the id.
        let status = unsafe { function(cbid, u8::from(enable)) };
        self.check(
            status,
            "cuptiActivityEnableRuntimeApi",
            Some(format!("{cbid}, {}", u8::from(enable))),
        )
    }

    /// `cuptiActivityEnableDriverApi`: per-call override of the DRIVER kind.
    pub fn enable_driver_api(&self, cbid: u32, enable: bool) -> Result<(), CuptiError> {
        let Some(function) = self.raw.activity_enable_driver_api else {
            return Err(self.missing("cuptiActivityEnableDriverApi", Some(cbid.to_string())));
        };
        // SAFETY: plain values; CUPTI validates the id.
        let status = unsafe { function(cbid, u8::from(enable)) };
        self.check(
            status,
            "cuptiActivityEnableDriverApi",
            Some(format!("{cbid}, {}", u8::from(enable))),
        )
    }

    /// Whether this libcupti has `cuptiActivityEnableRuntimeApi`/`DriverApi`.
    pub fn has_api_filters(&self) -> bool {
        self.raw.activity_enable_runtime_api.is_some()
            && self.raw.activity_enable_driver_api.is_some()
    }

    /// `cuptiSetThreadIdType`.
    pub fn set_thread_id_type(&self, kind: ThreadIdType) -> Result<(), CuptiError> {
        // SAFETY: takes an enum value by value.
        let status = unsafe { (self.raw.set_thread_id_type)(kind.0) };
        self.check(status, "cuptiSetThreadIdType", Some(kind.to_string()))
    }

    /// `cuptiGetTimestamp`: CUPTI's clock (Unix-epoch nanoseconds by default).
    pub fn timestamp(&self) -> Result<u64, CuptiError> {
        let mut timestamp = 0u64;
        // SAFETY: writes one uint64_t through a valid pointer.
        let status = unsafe { (self.raw.get_timestamp)(&mut timestamp) };
        self.check(status, "cuptiGetTimestamp", None)?;
        Ok(timestamp)
    }

    /// `cuptiActivityPushExternalCorrelationId` (for the calling thread).
    pub fn push_external_correlation_id(
        &self,
        kind: ExternalCorrelationKind,
        id: u64,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.raw.activity_push_external_correlation_id)(kind.0, id) };
        // The argument text only on failure: NVTX ranges push all the time.
        if status == CuptiStatus::SUCCESS.0 {
            return Ok(());
        }
        self.check(
            status,
            "cuptiActivityPushExternalCorrelationId",
            Some(format!("{kind}, {id}")),
        )
    }

    /// `cuptiActivityPopExternalCorrelationId`: returns the id popped.
    pub fn pop_external_correlation_id(
        &self,
        kind: ExternalCorrelationKind,
    ) -> Result<u64, CuptiError> {
        let mut id = 0u64;
        // SAFETY: writes one uint64_t through a valid pointer.
        let status = unsafe { (self.raw.activity_pop_external_correlation_id)(kind.0, &mut id) };
        if status != CuptiStatus::SUCCESS.0 {
            self.check(
                status,
                "cuptiActivityPopExternalCorrelationId",
                Some(kind.to_string()),
            )?;
        }
        Ok(id)
    }

    /// `cuptiGetLastError`: the last error of any CUPTI call on this thread (resets it).
    pub fn last_error(&self) -> CuptiStatus {
        // SAFETY: no arguments.
        CuptiStatus(unsafe { (self.raw.get_last_error)() })
    }

    /// Turns a status into `Ok` or a [`CuptiError`] carrying CUPTI's own text:
    /// for the calls made here, and for callers of [`Cupti::raw`] entry points
    /// and [`Cupti::raw_symbol`] functions that return a `CUptiResult`.
    pub fn check(
        &self,
        status: RawStatus,
        function: &'static str,
        argument: Option<String>,
    ) -> Result<(), CuptiError> {
        let status = CuptiStatus(status);
        if status == CuptiStatus::SUCCESS {
            return Ok(());
        }
        Err(CuptiError {
            function,
            argument,
            status,
            status_text: self
                .result_string(status)
                .unwrap_or_else(|| status.full_name()),
            message: self.error_message(status),
        })
    }

    /// The error for an optional function this libcupti does not export.
    pub(crate) fn missing(&self, function: &'static str, argument: Option<String>) -> CuptiError {
        let status = CuptiStatus::ERROR_API_NOT_IMPLEMENTED;
        CuptiError {
            function,
            argument,
            status,
            status_text: status.full_name(),
            message: Some(format!(
                "{} (CUPTI {}) does not export it",
                self.path.display(),
                self.version
            )),
        }
    }
}

/// Calls `cuptiGetResultString`/`cuptiGetErrorMessage` and copies the string.
fn call_string(function: raw::GetStringFn, status: CuptiStatus) -> Option<String> {
    let mut text: *const c_char = ptr::null();
    // SAFETY: writes one pointer through a valid pointer; CUPTI validates the status.
    let result = unsafe { function(status.0, &mut text) };
    if result != 0 || text.is_null() {
        return None;
    }
    // SAFETY: on success CUPTI points `text` at a static NUL-terminated string.
    Some(
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned(),
    )
}
