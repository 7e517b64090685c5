//! NVTX's arguments as its v3 headers define them, decoded for the callbacks in
//! `tables.rs`: messages (ASCII, wide, registered strings), event attributes (category
//! and color), domain handles.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cupmon_monitor::RangeAttributes;

use super::categories;
use super::ranges::{DomainKey, Message, DEFAULT_DOMAIN};

/// `nvtxEventAttributes_v2`: 48 bytes, the message last.
#[repr(C)]
pub(crate) struct EventAttributes {
    version: u16,
    size: u16,
    category: u32,
    color_type: i32,
    color: u32,
    payload_type: i32,
    reserved0: i32,
    payload: u64,
    message_type: i32,
    message: *const c_void,
}

/// `nvtxMessageType_t`.
const MESSAGE_ASCII: i32 = 1;
const MESSAGE_UNICODE: i32 = 2;
const MESSAGE_REGISTERED: i32 = 3;
/// Longest wide-character message read (NVTX sets no limit; a missing terminator
/// must not walk memory forever).
const MAX_WIDE_CHARS: usize = 4096;

/// `nvtxColorType_t`'s ARGB.
const COLOR_ARGB: i32 = 1;

/// A domain handle (`nvtxDomainHandle_t`) cupmon gives out: leaked, as NVTX handles
/// stay valid for the process's life.
pub(super) struct Domain {
    pub(super) name: &'static str,
}

/// Run a callback's body; a panic (a bug of cupmon's) never unwinds into the program.
pub(super) fn guarded<T: Default>(f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_default()
}

/// # Safety
/// `text` is null or a NUL-terminated string alive for the call.
pub(super) unsafe fn ascii<'a>(text: *const c_char) -> Message<'a> {
    if text.is_null() {
        return Message::None;
    }
    // SAFETY: the caller's promise.
    Message::Ascii(unsafe { CStr::from_ptr(text) }.to_bytes())
}

/// # Safety
/// `text` is null or a NUL-terminated `wchar_t` (UTF-32 on Linux) string.
pub(super) unsafe fn wide<'a>(text: *const i32) -> Message<'a> {
    if text.is_null() {
        return Message::None;
    }
    let mut out = String::new();
    for i in 0..MAX_WIDE_CHARS {
        // SAFETY: within the string: its terminator has not been seen yet.
        let c = unsafe { *text.add(i) };
        if c == 0 {
            break;
        }
        out.push(char::from_u32(c as u32).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    Message::Text(out)
}

/// # Safety
/// `attributes` is null or points at NVTX event attributes alive for the call whose
/// registered-string handles were returned by `domain_register_string_*`.
pub(super) unsafe fn message<'a>(attributes: *const EventAttributes) -> Message<'a> {
    if attributes.is_null() {
        return Message::None;
    }
    // SAFETY: the caller's promise; the message is read only when the struct, by its
    // own size field, reaches it.
    unsafe {
        let size = (*attributes).size as usize;
        if size < size_of::<EventAttributes>() {
            return Message::None;
        }
        let text = (*attributes).message;
        match (*attributes).message_type {
            MESSAGE_ASCII => ascii(text.cast()),
            MESSAGE_UNICODE => wide(text.cast()),
            MESSAGE_REGISTERED if !text.is_null() => Message::Registered(&*text.cast::<Arc<str>>()),
            _ => Message::None,
        }
    }
}

pub(super) fn domain_key(domain: *const Domain) -> DomainKey {
    domain as DomainKey
}

/// A range's or mark's attributes in `domain` without event attributes (the `A` and
/// `W` calls: the default domain).
pub(super) fn plain() -> (DomainKey, RangeAttributes) {
    (DEFAULT_DOMAIN, RangeAttributes::default())
}

/// # Safety
/// `domain` is null or a handle `domain_create_*` returned; `attributes` as for
/// [`message`].
pub(super) unsafe fn attributes_of(
    domain: *const Domain,
    attributes: *const EventAttributes,
) -> (DomainKey, RangeAttributes) {
    let key = domain_key(domain);
    // SAFETY: the caller's promise: a handle cupmon leaked, alive for good.
    let name = (!domain.is_null()).then(|| unsafe { (*domain).name });
    let mut out = RangeAttributes {
        domain: name,
        ..RangeAttributes::default()
    };
    // SAFETY: the caller's promise; fields read only when the struct, by its own size
    // field, holds them all.
    unsafe {
        if !attributes.is_null() && (*attributes).size as usize >= size_of::<EventAttributes>() {
            out.category = categories::of(key, (*attributes).category);
            if (*attributes).color_type == COLOR_ARGB {
                out.color = Some((*attributes).color);
            }
        }
    }
    (key, out)
}
