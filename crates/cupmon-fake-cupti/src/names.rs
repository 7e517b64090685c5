//! Kernel names: one live, NUL-terminated copy per distinct name for the life of
//! the process, so kernel records can point at it as CUPTI's do.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::Mutex;

use crate::state::lock;

/// The address of the interned copy of `name`.
pub(crate) fn intern(name: &CStr) -> u64 {
    static NAMES: Mutex<Option<HashMap<CString, &'static CStr>>> = Mutex::new(None);
    let mut names = lock(&NAMES);
    let names = names.get_or_insert_with(HashMap::new);
    let interned = *names
        .entry(name.to_owned())
        // Leaked on purpose: records point at it until the process ends.
        .or_insert_with(|| Box::leak(name.to_owned().into_boxed_c_str()));
    interned.as_ptr() as u64
}
