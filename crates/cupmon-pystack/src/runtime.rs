//! The CPython in this process, found once: its version (`Py_Version`), the layout the
//! walker reads it with, and the few functions it calls, looked up with `dlsym` in the
//! process (no link to libpython: a process without Python has no attribution and
//! pays one failed lookup).

use std::ffi::c_void;
use std::sync::OnceLock;

use libloading::os::unix::Library;

use crate::layout::{self, Layout};

pub(crate) type GetThisThreadStateFn = unsafe extern "C" fn() -> *mut c_void;
pub(crate) type IsInitializedFn = unsafe extern "C" fn() -> i32;
pub(crate) type Addr2LineFn = unsafe extern "C" fn(*mut c_void, i32) -> i32;

/// What the walker needs of this process's CPython.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Runtime {
    pub layout: Layout,
    pub this_thread_state: GetThisThreadStateFn,
    pub is_initialized: IsInitializedFn,
    pub addr2line: Addr2LineFn,
    /// `&PyCode_Type`: a frame's code object is checked against it before it is read.
    pub code_type: usize,
    /// `Py_Version` (`0x030c01f0` for 3.12.1).
    pub hex_version: u64,
}

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// This process's CPython, or why its stacks cannot be read.
pub(crate) fn runtime() -> &'static Result<Runtime, String> {
    RUNTIME.get_or_init(find)
}

fn find() -> Result<Runtime, String> {
    let this = Library::this();
    // SAFETY: looking symbols up in the already-loaded process; each is used only with
    // the type CPython's headers give it (`pylifecycle.h`, `pystate.h`, `code.h`,
    // `object.h`). The process image is never unloaded.
    unsafe {
        let version = this
            .get::<*const u64>(b"Py_Version\0")
            .map_err(|_| "no CPython 3.11 or later in this process (no Py_Version)".to_owned())?;
        let hex_version = u64::from(*(*version).cast::<u32>());
        let (major, minor) = ((hex_version >> 24) as u8, (hex_version >> 16) as u8);
        let layout = layout::for_version(major, minor).ok_or_else(|| {
            format!(
                "CPython {major}.{minor} is not one this cupmon can read stacks of \
                 (3.11, 3.12, 3.13)"
            )
        })?;
        let symbol = |name: &[u8]| {
            this.get::<*const c_void>(name)
                .map(|s| *s)
                .map_err(|_| format!("CPython {major}.{minor} has no {}", show(name)))
        };
        let this_thread_state = symbol(b"PyGILState_GetThisThreadState\0")?;
        let is_initialized = symbol(b"Py_IsInitialized\0")?;
        let addr2line = symbol(b"PyCode_Addr2Line\0")?;
        let code_type = symbol(b"PyCode_Type\0")?;
        Ok(Runtime {
            layout,
            this_thread_state: std::mem::transmute::<*const c_void, GetThisThreadStateFn>(
                this_thread_state,
            ),
            is_initialized: std::mem::transmute::<*const c_void, IsInitializedFn>(is_initialized),
            addr2line: std::mem::transmute::<*const c_void, Addr2LineFn>(addr2line),
            code_type: code_type as usize,
            hex_version,
        })
    }
}

fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name.strip_suffix(b"\0").unwrap_or(name)).into_owned()
}
