//! Kernel-name demangling (the vendored, patched cpp_demangle) on arbitrary names from
//! `kernel_names.tsv`: a result or the name unchanged, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = cupmon_records::demangle(name);
    }
});
