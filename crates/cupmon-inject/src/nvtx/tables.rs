//! NVTX's side of the contract, as its v3 headers define it: the export table of
//! callbacks (`NVTX_ETID_CALLBACKS`), whose `GetModuleFunctionTable` hands out, per
//! module, an array of pointers to NVTX's own function-pointer slots; cupmon writes
//! its functions into the slots of the calls it handles (the CORE and CORE2 modules'
//! ranges, marks, domains, registered strings and category names). Slots left alone
//! become no-ops (thread names and resources, which have no place in cupmon's traces
//! yet).
//!
//! The functions here only decode NVTX's arguments (with `arguments.rs`); `ranges.rs`,
//! `marks.rs` and `categories.rs` do the work.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use super::arguments::{
    ascii, attributes_of, domain_key, guarded, message, plain, wide, Domain, EventAttributes,
};
use super::ranges::{self, Message, DEFAULT_DOMAIN};
use super::{categories, marks};

/// A function as NVTX's generic slot type.
macro_rules! slot {
    ($f:ident as $t:ty) => {{
        let f: $t = $f;
        // SAFETY: only a function-pointer type change; NVTX casts the slot back to
        // this exact signature (its `*_impl_fntype`) before calling it.
        Some(unsafe { std::mem::transmute::<$t, unsafe extern "C" fn()>(f) })
    }};
}

/// `NvtxGetExportTableFunc_t`.
pub(crate) type GetExportTable = unsafe extern "C" fn(u32) -> *const c_void;

/// `NVTX_ETID_CALLBACKS`.
const ETID_CALLBACKS: u32 = 1;
/// `NVTX_CB_MODULE_CORE`, `NVTX_CB_MODULE_CORE2`.
const MODULE_CORE: c_int = 1;
const MODULE_CORE2: c_int = 5;

/// `NvtxFunctionPointer`: a slot NVTX calls through, cast to each call's type.
type Slot = Option<unsafe extern "C" fn()>;

/// `NvtxExportTableCallbacks`.
#[repr(C)]
struct ExportTableCallbacks {
    struct_size: usize,
    get_module_function_table:
        Option<unsafe extern "C" fn(c_int, *mut *mut *mut Slot, *mut u32) -> c_int>,
}

/// Fill NVTX's CORE and CORE2 tables through `get_export_table`. False when NVTX
/// offers no callback table (then NVTX turns every call into a no-op).
pub(crate) fn attach(get_export_table: GetExportTable) -> bool {
    // SAFETY: NVTX's own function, called with a table id as its contract says; it
    // returns null or a pointer to its static table of that id.
    let table = unsafe { get_export_table(ETID_CALLBACKS) }.cast::<ExportTableCallbacks>();
    if table.is_null() {
        return false;
    }
    // SAFETY: non-null, pointing at NVTX's static `NvtxExportTableCallbacks`; the
    // function pointer is read only when the struct is large enough to hold it.
    let get_module = unsafe {
        if (*table).struct_size < size_of::<ExportTableCallbacks>() {
            return false;
        }
        (*table).get_module_function_table
    };
    let Some(get_module) = get_module else {
        return false;
    };
    let core: [(usize, Slot); 13] = [
        (
            1,
            slot!(mark_ex as unsafe extern "C" fn(*const EventAttributes)),
        ),
        (2, slot!(mark_a as unsafe extern "C" fn(*const c_char))),
        (3, slot!(mark_w as unsafe extern "C" fn(*const i32))),
        (
            12,
            slot!(name_category_a as unsafe extern "C" fn(u32, *const c_char)),
        ),
        (
            13,
            slot!(name_category_w as unsafe extern "C" fn(u32, *const i32)),
        ),
        (
            4,
            slot!(range_start_ex as unsafe extern "C" fn(*const EventAttributes) -> u64),
        ),
        (
            5,
            slot!(range_start_a as unsafe extern "C" fn(*const c_char) -> u64),
        ),
        (
            6,
            slot!(range_start_w as unsafe extern "C" fn(*const i32) -> u64),
        ),
        (7, slot!(range_end as unsafe extern "C" fn(u64))),
        (
            8,
            slot!(range_push_ex as unsafe extern "C" fn(*const EventAttributes) -> c_int),
        ),
        (
            9,
            slot!(range_push_a as unsafe extern "C" fn(*const c_char) -> c_int),
        ),
        (
            10,
            slot!(range_push_w as unsafe extern "C" fn(*const i32) -> c_int),
        ),
        (11, slot!(range_pop as unsafe extern "C" fn() -> c_int)),
    ];
    let core2: [(usize, Slot); 11] = [
        (
            1,
            slot!(domain_mark_ex as unsafe extern "C" fn(*const Domain, *const EventAttributes)),
        ),
        (
            8,
            slot!(
                domain_name_category_a as unsafe extern "C" fn(*const Domain, u32, *const c_char)
            ),
        ),
        (
            9,
            slot!(domain_name_category_w as unsafe extern "C" fn(*const Domain, u32, *const i32)),
        ),
        (
            2,
            slot!(
                domain_range_start_ex
                    as unsafe extern "C" fn(*const Domain, *const EventAttributes) -> u64
            ),
        ),
        (
            3,
            slot!(domain_range_end as unsafe extern "C" fn(*const Domain, u64)),
        ),
        (
            4,
            slot!(
                domain_range_push_ex
                    as unsafe extern "C" fn(*const Domain, *const EventAttributes) -> c_int
            ),
        ),
        (
            5,
            slot!(domain_range_pop as unsafe extern "C" fn(*const Domain) -> c_int),
        ),
        (
            10,
            slot!(
                domain_register_string_a
                    as unsafe extern "C" fn(*const Domain, *const c_char) -> *const Arc<str>
            ),
        ),
        (
            11,
            slot!(
                domain_register_string_w
                    as unsafe extern "C" fn(*const Domain, *const i32) -> *const Arc<str>
            ),
        ),
        (
            12,
            slot!(domain_create_a as unsafe extern "C" fn(*const c_char) -> *const Domain),
        ),
        (
            13,
            slot!(domain_create_w as unsafe extern "C" fn(*const i32) -> *const Domain),
        ),
    ];
    fill(get_module, MODULE_CORE, &core) && fill(get_module, MODULE_CORE2, &core2)
}

fn fill(
    get_module: unsafe extern "C" fn(c_int, *mut *mut *mut Slot, *mut u32) -> c_int,
    module: c_int,
    functions: &[(usize, Slot)],
) -> bool {
    let mut table: *mut *mut Slot = std::ptr::null_mut();
    let mut size: u32 = 0;
    // SAFETY: NVTX's function with two valid out-pointers.
    let ok = unsafe { get_module(module, &mut table, &mut size) };
    if ok == 0 || table.is_null() {
        return false;
    }
    for &(index, function) in functions {
        // An older NVTX may have fewer slots; index 0 is never a function.
        if index == 0 || index >= size as usize {
            continue;
        }
        // SAFETY: NVTX says the array holds `size` entries past index 0 (plus a null
        // guard), each null or the address of one of its function-pointer slots.
        unsafe {
            let slot = *table.add(index);
            if !slot.is_null() {
                *slot = function;
            }
        }
    }
    true
}

// The callbacks. Each one's SAFETY rests on NVTX's contract: the pointers it passes
// are null or valid for the call, and handles are the ones cupmon returned.

unsafe extern "C" fn range_push_a(text: *const c_char) -> c_int {
    // SAFETY: NVTX's contract (above).
    guarded(|| ranges::push(plain(), unsafe { ascii(text) }))
}
unsafe extern "C" fn range_push_w(text: *const i32) -> c_int {
    // SAFETY: NVTX's contract (above).
    guarded(|| ranges::push(plain(), unsafe { wide(text) }))
}
unsafe extern "C" fn range_push_ex(attributes: *const EventAttributes) -> c_int {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        ranges::push(
            unsafe { attributes_of(std::ptr::null(), attributes) },
            unsafe { message(attributes) },
        )
    })
}
unsafe extern "C" fn range_pop() -> c_int {
    guarded(|| ranges::pop(DEFAULT_DOMAIN))
}
unsafe extern "C" fn range_start_a(text: *const c_char) -> u64 {
    // SAFETY: NVTX's contract (above).
    guarded(|| ranges::start(plain(), unsafe { ascii(text) }))
}
unsafe extern "C" fn range_start_w(text: *const i32) -> u64 {
    // SAFETY: NVTX's contract (above).
    guarded(|| ranges::start(plain(), unsafe { wide(text) }))
}
unsafe extern "C" fn range_start_ex(attributes: *const EventAttributes) -> u64 {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        ranges::start(
            unsafe { attributes_of(std::ptr::null(), attributes) },
            unsafe { message(attributes) },
        )
    })
}
unsafe extern "C" fn range_end(range: u64) {
    guarded(|| ranges::end(range))
}
unsafe extern "C" fn domain_range_push_ex(
    domain: *const Domain,
    attributes: *const EventAttributes,
) -> c_int {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        ranges::push(unsafe { attributes_of(domain, attributes) }, unsafe {
            message(attributes)
        })
    })
}
unsafe extern "C" fn domain_range_pop(domain: *const Domain) -> c_int {
    guarded(|| ranges::pop(domain_key(domain)))
}
unsafe extern "C" fn domain_range_start_ex(
    domain: *const Domain,
    attributes: *const EventAttributes,
) -> u64 {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        ranges::start(unsafe { attributes_of(domain, attributes) }, unsafe {
            message(attributes)
        })
    })
}
unsafe extern "C" fn domain_range_end(_: *const Domain, range: u64) {
    guarded(|| ranges::end(range))
}

fn text_of(message: Message<'_>) -> Arc<str> {
    match message {
        Message::Ascii(bytes) => Arc::from(String::from_utf8_lossy(bytes).as_ref()),
        Message::Text(text) => Arc::from(text),
        Message::Registered(name) => name.clone(),
        Message::None => Arc::from(""),
    }
}
fn leak_string(message: Message<'_>) -> *const Arc<str> {
    Box::leak(Box::new(text_of(message)))
}
unsafe extern "C" fn domain_register_string_a(
    _: *const Domain,
    text: *const c_char,
) -> *const Arc<str> {
    // SAFETY: NVTX's contract (above).
    guarded(|| leak_string(unsafe { ascii(text) }) as usize) as *const Arc<str>
}
unsafe extern "C" fn domain_register_string_w(
    _: *const Domain,
    text: *const i32,
) -> *const Arc<str> {
    // SAFETY: NVTX's contract (above).
    guarded(|| leak_string(unsafe { wide(text) }) as usize) as *const Arc<str>
}
fn leak_domain(message: Message<'_>) -> usize {
    let name: &'static str = Box::leak(message.text().into_owned().into_boxed_str());
    Box::leak(Box::new(Domain { name })) as *const Domain as usize
}
unsafe extern "C" fn domain_create_a(name: *const c_char) -> *const Domain {
    // SAFETY: NVTX's contract (above).
    guarded(|| leak_domain(unsafe { ascii(name) })) as *const Domain
}
unsafe extern "C" fn domain_create_w(name: *const i32) -> *const Domain {
    // SAFETY: NVTX's contract (above).
    guarded(|| leak_domain(unsafe { wide(name) })) as *const Domain
}

unsafe extern "C" fn mark_a(text: *const c_char) {
    // SAFETY: NVTX's contract (above).
    guarded(|| marks::mark(plain().1, unsafe { ascii(text) }))
}
unsafe extern "C" fn mark_w(text: *const i32) {
    // SAFETY: NVTX's contract (above).
    guarded(|| marks::mark(plain().1, unsafe { wide(text) }))
}
unsafe extern "C" fn mark_ex(attributes: *const EventAttributes) {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        marks::mark(
            unsafe { attributes_of(std::ptr::null(), attributes) }.1,
            unsafe { message(attributes) },
        )
    })
}
unsafe extern "C" fn domain_mark_ex(domain: *const Domain, attributes: *const EventAttributes) {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        marks::mark(unsafe { attributes_of(domain, attributes) }.1, unsafe {
            message(attributes)
        })
    })
}
unsafe extern "C" fn name_category_a(category: u32, name: *const c_char) {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        categories::name(
            DEFAULT_DOMAIN,
            category,
            unsafe { ascii(name) }.text().into_owned(),
        )
    })
}
unsafe extern "C" fn name_category_w(category: u32, name: *const i32) {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        categories::name(
            DEFAULT_DOMAIN,
            category,
            unsafe { wide(name) }.text().into_owned(),
        )
    })
}
unsafe extern "C" fn domain_name_category_a(
    domain: *const Domain,
    category: u32,
    name: *const c_char,
) {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        categories::name(
            domain_key(domain),
            category,
            unsafe { ascii(name) }.text().into_owned(),
        )
    })
}
unsafe extern "C" fn domain_name_category_w(
    domain: *const Domain,
    category: u32,
    name: *const i32,
) {
    // SAFETY: NVTX's contract (above).
    guarded(|| {
        categories::name(
            domain_key(domain),
            category,
            unsafe { wide(name) }.text().into_owned(),
        )
    })
}
