//! The merge's JSON reader on arbitrary bytes: no panic, validating and
//! parsing agree, written values read back the same, and reading through a
//! trickling stream gives what reading the slice gives.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    cupmon_trace::internals::check_json_reader(data);
});
