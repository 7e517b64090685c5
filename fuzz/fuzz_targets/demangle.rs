//! Kernel-name demangling (libstdc++'s `__cxa_demangle` through cupmon-demangle, with
//! Kineto's rules) on arbitrary names: a result or the name unchanged, never a crash, a
//! leak of the malloc'ed result (LeakSanitizer) or a hang; names Kineto keeps mangled
//! (over 1024 bytes) and names no C string can hold (a NUL) come back unchanged.
#![no_main]

use cupmon_demangle::{demangle, KINETO_MAX_SYMBOL_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(name) = std::str::from_utf8(data) else {
        return;
    };
    let out = demangle(name);
    if name.len() > KINETO_MAX_SYMBOL_LEN || name.contains('\0') {
        assert_eq!(out, name);
    }
});
