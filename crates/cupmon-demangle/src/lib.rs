//! Kernel names demangled exactly as Kineto, torch.profiler's CUPTI layer, shows them, so
//! that cupmon's traces join torch.profiler's by name.
//!
//! Kineto (`libkineto/src/Demangle.cpp`) hands each CUPTI kernel name to the C++ runtime's
//! `abi::__cxa_demangle` and keeps the name as it is when it is longer than 1024 bytes
//! (its `kMaxSymbolSize`) or when `__cxa_demangle` rejects it (any non-zero status).
//! (libiberty, in libstdc++ and binutils' `c++filt` alike, rejects names over 1024 bytes
//! itself, its recursion limit of 2048 components at two per byte; Kineto's limit keeps
//! that true whatever the C++ runtime.)
//! [`demangle`] does the same with the same function: this crate links the process's C++
//! runtime (libstdc++ on Linux, `build.rs`) rather than carrying a demangler of its own,
//! so it prints whatever that libstdc++ prints, version quirks included.
//!
//! `__cxa_demangle` also reads bare type names (`"i"` is `int`, `"3foo"` is `foo`); Kineto
//! shows those demangled too, and so does [`demangle`]. Names that are neither, such as
//! `extern "C"` kernels (`ampere_sgemm_128x64_nn`) or cupmon's `kernel@0x7f..`
//! placeholders, come back unchanged.
//!
//! ```
//! use cupmon_demangle::demangle;
//! assert_eq!(demangle("_ZN2at6native6launchEv"), "at::native::launch()");
//! assert_eq!(demangle("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
//! ```
#![allow(unsafe_code)]

use std::borrow::Cow;

mod short;
pub use short::{short_name, ELLIPSIS};

/// Kineto's `kMaxSymbolSize`: a name longer than this many bytes is shown mangled.
pub const KINETO_MAX_SYMBOL_LEN: usize = 1024;

/// `mangled` as Kineto shows it: demangled by `__cxa_demangle`, or unchanged when it is
/// longer than [`KINETO_MAX_SYMBOL_LEN`] bytes, when `__cxa_demangle` rejects it, or when
/// it holds a NUL byte (CUPTI's names are C strings and never do).
pub fn demangle(mangled: &str) -> Cow<'_, str> {
    if mangled.len() > KINETO_MAX_SYMBOL_LEN {
        return Cow::Borrowed(mangled);
    }
    match cxa::demangle(mangled) {
        Some(demangled) => Cow::Owned(demangled),
        None => Cow::Borrowed(mangled),
    }
}

#[cfg(not(target_env = "msvc"))]
mod cxa {
    use std::ffi::{c_char, c_int, CStr, CString};

    extern "C" {
        /// `abi::__cxa_demangle` of `<cxxabi.h>` (Itanium C++ ABI 3.4): with a null buffer
        /// it returns a `malloc`ed, NUL-terminated string the caller must `free`, or null.
        fn __cxa_demangle(
            mangled_name: *const c_char,
            output_buffer: *mut c_char,
            length: *mut usize,
            status: *mut c_int,
        ) -> *mut c_char;
    }

    /// What `__cxa_demangle` prints, or `None` when it rejects the name (or the name holds
    /// a NUL byte). Bytes that are not UTF-8 (a source name cut inside a character)
    /// become U+FFFD.
    pub(super) fn demangle(mangled: &str) -> Option<String> {
        let name = CString::new(mangled).ok()?;
        let mut status: c_int = -1;
        // SAFETY: `name` is a NUL-terminated string that outlives the call; a null output
        // buffer and null length ask `__cxa_demangle` to allocate the result itself; and
        // `status` is a live `c_int` it may write. It keeps no pointer after returning.
        let out = unsafe {
            __cxa_demangle(
                name.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut status,
            )
        };
        if out.is_null() {
            return None;
        }
        let demangled = (status == 0).then(|| {
            // SAFETY: a non-null result is a NUL-terminated string that stays valid and
            // unchanged until the `free` below; it is copied out before then.
            unsafe { CStr::from_ptr(out) }
                .to_string_lossy()
                .into_owned()
        });
        // SAFETY: `out` came from `malloc` inside `__cxa_demangle`, is owned by us, and is
        // freed exactly once, here; nothing refers to it afterwards.
        unsafe { libc::free(out.cast()) };
        demangled
    }
}

/// MSVC's runtime has no `__cxa_demangle`; Kineto keeps names as they are there too.
#[cfg(target_env = "msvc")]
mod cxa {
    pub(super) fn demangle(_mangled: &str) -> Option<String> {
        None
    }
}
