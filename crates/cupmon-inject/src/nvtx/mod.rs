//! NVTX ranges without code changes: `InitializeInjectionNvtx2`, the entry point NVTX
//! v3 (header-only, in every CUDA toolkit, torch and the `nvtx` package) calls in the
//! library named by `NVTX_INJECTION64_PATH` at the program's first NVTX call.
//! `cupmon run` sets that variable to this library unless the user set it (Nsight
//! Systems does); pushed and started ranges of any domain then become cupmon
//! annotations (`ranges.rs`), drawn as `gpu_user_annotation` spans over the GPU work
//! launched inside them and as `user_annotation` slices on the CPU thread that
//! pushed them; marks become instants on their thread (`marks.rs`), and category
//! names given with `nvtxNameCategory*` name the ranges' categories (`categories.rs`).
//! torch's autograd sequence numbers in range names (`emit_nvtx`) give backward
//! kernels their forward op's Python line (`seq.rs`).
//!
//! Why cupmon's own NVTX callbacks rather than CUPTI's NVTX support (which needs
//! `NVTX_INJECTION64_PATH` to name libcupti, and the MARKER activity kind): CUPTI's
//! markers are records of their own with no link to the kernels launched inside a
//! range, they cost a record per push and pop in the always-on dump, and they depend
//! on the CUPTI version; a CUSTOM1 external id pushed per range is what the trace
//! code already turns into spans over the GPU work, and it costs one CUPTI push/pop.

use std::ffi::{c_int, CStr, CString};
use std::panic::catch_unwind;
use std::path::{Path, PathBuf};

mod arguments;
mod categories;
mod marks;
mod ranges;
mod seq;
mod tables;

use tables::GetExportTable;

/// NVTX's variable naming the injection library of a 64-bit process.
pub const NVTX_INJECTION_PATH_VAR: &str = "NVTX_INJECTION64_PATH";

/// Called by NVTX at the program's first NVTX call. Returns 1 when cupmon (or the
/// tool it handed over to) took NVTX's calls, 0 to make them no-ops.
///
/// # Safety
/// `get_export_table` is NVTX's `nvtxGetExportTable` (the header's contract).
#[no_mangle]
pub unsafe extern "C" fn InitializeInjectionNvtx2(
    get_export_table: Option<GetExportTable>,
) -> c_int {
    crate::panics::quiet_in_callbacks();
    let Some(get_export_table) = get_export_table else {
        return 0;
    };
    catch_unwind(|| {
        if let Some(other) = other_tool() {
            return hand_over(&other, get_export_table);
        }
        // SAFETY: registers a handler that only bumps an atomic, safe in a forked child.
        unsafe { libc::pthread_atfork(None, None, Some(ranges::forked)) };
        let attached = tables::attach(get_export_table);
        if attached {
            cupmon_log::debug!("NVTX ranges are recorded as annotations");
        } else {
            cupmon_log::warn!("NVTX offered no callback table: NVTX ranges are not recorded");
        }
        c_int::from(attached)
    })
    .unwrap_or(0)
}

/// The library `NVTX_INJECTION64_PATH` names when it is not this one: an NVTX build
/// that finds an already-loaded `InitializeInjectionNvtx2` (cupmon's, preloaded by
/// `cupmon run`) before reading the variable must still reach the user's tool.
fn other_tool() -> Option<PathBuf> {
    let named = std::env::var_os(NVTX_INJECTION_PATH_VAR).filter(|v| !v.is_empty())?;
    let named = PathBuf::from(named);
    let this = this_library()?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    (!same(&named, &this)).then_some(named)
}

/// The path this library was loaded from.
fn this_library() -> Option<PathBuf> {
    // SAFETY: dladdr fills `info` for an address inside a loaded object; the name it
    // points to lives as long as the object (this library, loaded for good).
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let here = InitializeInjectionNvtx2 as *const libc::c_void;
        if libc::dladdr(here, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        let name = CStr::from_ptr(info.dli_fname).to_str().ok()?;
        Some(PathBuf::from(name))
    }
}

/// Load `tool` and hand NVTX to its `InitializeInjectionNvtx2`, as NVTX would have.
fn hand_over(tool: &Path, get_export_table: GetExportTable) -> c_int {
    let Ok(path) = CString::new(tool.as_os_str().as_encoded_bytes()) else {
        return 0;
    };
    // SAFETY: dlopen/dlsym with NUL-terminated strings; the symbol, when found, has
    // the signature NVTX's contract gives it, and is called as NVTX would call it.
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_LAZY);
        if handle.is_null() {
            cupmon_log::warn!(
                "{}: cannot load the NVTX tool {NVTX_INJECTION_PATH_VAR} names; NVTX ranges go \
                 nowhere",
                tool.display()
            );
            return 0;
        }
        let init = libc::dlsym(handle, c"InitializeInjectionNvtx2".as_ptr());
        if init.is_null() {
            return 0;
        }
        let init: unsafe extern "C" fn(GetExportTable) -> c_int = std::mem::transmute(init);
        init(get_export_table)
    }
}
