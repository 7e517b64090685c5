//! The CUPTI entry points cupmon interposes when this library is also
//! `LD_PRELOAD`ed (as `cupmon run` does): other clients' calls land here, so
//! cupmon keeps the one real activity registration and multiplexes it.
//!
//! While no cupmon session runs, every call goes straight to the real CUPTI
//! (resolved from libcupti's own handle, never from the global scope where
//! these symbols would shadow it).

use std::ffi::{c_uint, c_void};
use std::sync::Arc;

use cupmon_cupti::launches;
use cupmon_cupti::raw::{
    CallbackFn, CompleteCallback, RawContext, RawStatus, RequestCallback, SubscriberHandle,
};
use cupmon_cupti::{ActivityKind, Cupti, CuptiStatus, Owner};

use crate::clients::{self, ClockFn, Fanout};
use crate::session::Session;

const SUCCESS: RawStatus = 0;
/// What cupmon answers when it cannot reach CUPTI at all.
const NOT_INITIALIZED: RawStatus = CuptiStatus::ERROR_NOT_INITIALIZED.0;

/// Hand a new session's buffers to the registered clients too.
pub(crate) fn attach(session: &Arc<Session>) {
    let cupti = session.monitor.cupti();
    session.monitor.set_observer(Arc::new(Fanout { cupti }));
}

/// For tests that call the interposed entry points directly (a test binary exports
/// none of them, so [`interposed`] cannot see them): behave as if preloaded.
#[doc(hidden)]
pub static ASSUME_INTERPOSED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether the CUPTI entry points this process calls are this library's (it was
/// preloaded, as `cupmon run` does), so that other CUPTI clients' calls reach cupmon.
pub(crate) fn interposed() -> bool {
    if ASSUME_INTERPOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return true;
    }
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; the result is only
    // compared with an address, never called.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"cuptiSubscribe".as_ptr()) };
    std::ptr::eq(found as *const (), cuptiSubscribe as *const ())
}

fn debug(what: std::fmt::Arguments<'_>) {
    if cupmon_log::enabled(cupmon_log::Level::Debug) {
        cupmon_log::debug!("interposed {what}");
    }
}

/// The real CUPTI, loading it if this process has not yet.
fn real() -> Option<&'static Cupti> {
    Cupti::loaded().or_else(|| Cupti::load().ok())
}

fn running() -> Option<Arc<Session>> {
    crate::session::current()
}

fn guard(f: impl FnOnce() -> RawStatus) -> RawStatus {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(NOT_INITIALIZED)
}

fn status(result: Result<(), cupmon_cupti::CuptiError>) -> RawStatus {
    match result {
        Ok(()) => SUCCESS,
        Err(e) => e.status.0,
    }
}

/// # Safety
/// The callbacks must be valid CUPTI buffer callbacks (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiActivityRegisterCallbacks(
    request: RequestCallback,
    complete: CompleteCallback,
) -> RawStatus {
    guard(|| {
        if running().is_some() {
            let owner = clients::register(request, complete);
            debug(format_args!(
                "cuptiActivityRegisterCallbacks: client {owner:?} kept by cupmon"
            ));
            return SUCCESS;
        }
        let Some(cupti) = real() else {
            return NOT_INITIALIZED;
        };
        // SAFETY: forwarded unchanged to the real function with the caller's callbacks.
        unsafe { (cupti.raw().activity_register_callbacks)(request, complete) }
    })
}

#[no_mangle]
pub extern "C" fn cuptiActivityEnable(kind: c_uint) -> RawStatus {
    guard(|| match (running(), real()) {
        (Some(_), Some(cupti)) if clients::any() => {
            let owner = clients::current();
            debug(format_args!(
                "cuptiActivityEnable({}) for {owner:?}",
                ActivityKind(kind)
            ));
            let enabled = cupti.enable_for(owner, ActivityKind(kind));
            clients::ensure_open(owner);
            status(enabled)
        }
        // SAFETY: forwarded unchanged to the real function.
        (_, Some(cupti)) => unsafe { (cupti.raw().activity_enable)(kind) },
        (_, None) => NOT_INITIALIZED,
    })
}

#[no_mangle]
pub extern "C" fn cuptiActivityDisable(kind: c_uint) -> RawStatus {
    guard(|| match (running(), real()) {
        (Some(session), Some(cupti)) if clients::any() => {
            let owner = clients::current();
            debug(format_args!(
                "cuptiActivityDisable({}) for {owner:?}",
                ActivityKind(kind)
            ));
            // Records made while the kind was on are still the client's: hand
            // over what CUPTI has before its interest ends.
            let _ = session.monitor.flush(false);
            status(cupti.disable_for(owner, ActivityKind(kind)))
        }
        // A client that never registered callbacks must not switch off cupmon's kinds.
        (Some(_), Some(_)) => SUCCESS,
        // SAFETY: forwarded unchanged to the real function.
        (None, Some(cupti)) => unsafe { (cupti.raw().activity_disable)(kind) },
        (_, None) => NOT_INITIALIZED,
    })
}

/// # Safety
/// `context` must be a valid `CUcontext` (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiActivityDisableContext(
    context: RawContext,
    kind: c_uint,
) -> RawStatus {
    guard(|| {
        if running().is_some() && cupmon_kind(kind) {
            // Per-context disabling would stop cupmon's records for that context.
            debug(format_args!(
                "cuptiActivityDisableContext({}) ignored",
                ActivityKind(kind)
            ));
            return SUCCESS;
        }
        match real().and_then(|c| c.raw().activity_disable_context) {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(context, kind) },
            None => NOT_INITIALIZED,
        }
    })
}

fn cupmon_kind(kind: c_uint) -> bool {
    real().is_some_and(|c| c.kinds_of(Owner::Cupmon).contains(&ActivityKind(kind)))
}

#[no_mangle]
pub extern "C" fn cuptiActivityFlushAll(flag: u32) -> RawStatus {
    guard(|| {
        if let Some(session) = running() {
            // cupmon flushes and waits until the worker has handed the
            // records to the clients, as CUPTI's flush would have.
            debug(format_args!("cuptiActivityFlushAll({flag})"));
            let flushed = session.monitor.flush(flag & 1 != 0);
            clients::complete_open();
            return match flushed {
                Ok(()) => SUCCESS,
                Err(_) => NOT_INITIALIZED,
            };
        }
        match real() {
            // SAFETY: forwarded unchanged to the real function.
            Some(cupti) => unsafe { (cupti.raw().activity_flush_all)(flag) },
            None => NOT_INITIALIZED,
        }
    })
}

/// `cuptiFinalize` would break CUPTI for the rest of the process (cupmon
/// included), so while cupmon runs it only ends the caller's interest.
#[no_mangle]
pub extern "C" fn cuptiFinalize() -> RawStatus {
    guard(|| {
        if running().is_some() {
            if let Some(cupti) = real() {
                let owner = clients::current();
                debug(format_args!("cuptiFinalize from {owner:?} swallowed"));
                cupti.release_all(owner);
                clients::complete_open();
            }
            return SUCCESS;
        }
        type FinalizeFn = unsafe extern "C" fn() -> RawStatus;
        // SAFETY: `cuptiFinalize` takes no arguments and returns a status.
        match real().and_then(|c| unsafe { c.raw_symbol::<FinalizeFn>("cuptiFinalize") }) {
            // SAFETY: forwarded to the real function.
            Some(f) => unsafe { f() },
            None => NOT_INITIALIZED,
        }
    })
}

/// A client's clock would change the timestamps of every record (cupmon's
/// dump included); cupmon keeps CUPTI's clock and converts the records it
/// hands to that client instead.
#[no_mangle]
pub extern "C" fn cuptiActivityRegisterTimestampCallback(clock: Option<ClockFn>) -> RawStatus {
    guard(|| {
        if running().is_some() {
            if let Some(clock) = clock {
                debug(format_args!(
                    "cuptiActivityRegisterTimestampCallback kept for the client"
                ));
                clients::register_clock(clock);
            }
            return SUCCESS;
        }
        type RegisterFn = unsafe extern "C" fn(Option<ClockFn>) -> RawStatus;
        // SAFETY: the symbol has this signature in every CUPTI that exports it.
        match real().and_then(|c| unsafe {
            c.raw_symbol::<RegisterFn>("cuptiActivityRegisterTimestampCallback")
        }) {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(clock) },
            None => NOT_INITIALIZED,
        }
    })
}

/// When cupmon's session ends, a client that registered through it gets the
/// real registration back, so it keeps working.
pub(crate) fn detach() {
    clients::complete_open();
    let (Some(cupti), Some(client)) = (Cupti::loaded(), clients::only()) else {
        return;
    };
    // SAFETY: the client's own callbacks, registered with the real CUPTI as
    // it asked in the first place.
    let status =
        unsafe { (cupti.raw().activity_register_callbacks)(client.request, client.complete) };
    debug(format_args!(
        "returned the activity callbacks to the client ({status})"
    ));
}

// The callback API. Before CUPTI 13.3 a process has one callback subscriber, and
// cupmon's launch counter is one; another client's subscription (Kineto's) is served
// through cupmon's, so both keep their callbacks. Handles cupmon did not give out
// (a subscriber that came before cupmon) go to CUPTI unchanged.

/// What both subscribe entry points do first: serve the client through cupmon's
/// subscription when cupmon holds (or can take) it, `Err(status)` to return then (or
/// when no CUPTI is loaded); `Ok(cupti)`: forward the call to the real CUPTI.
///
/// # Safety
/// `subscriber` must be valid for a write (the caller's contract with CUPTI).
unsafe fn serve_subscriber(
    name: &str,
    subscriber: *mut SubscriberHandle,
    callback: Option<CallbackFn>,
    userdata: *mut c_void,
) -> Result<&'static Cupti, RawStatus> {
    let Some(cupti) = real() else {
        return Err(NOT_INITIALIZED);
    };
    // SAFETY: the caller's out-pointer (this function's contract).
    if let Some(status) = unsafe { cupti.subscribe_client(subscriber, callback, userdata) } {
        debug(format_args!(
            "{name}: client served through cupmon ({status})"
        ));
        return Err(status);
    }
    Ok(cupti)
}

/// # Safety
/// `subscriber` must be valid for a write (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiSubscribe(
    subscriber: *mut SubscriberHandle,
    callback: Option<CallbackFn>,
    userdata: *mut c_void,
) -> RawStatus {
    guard(|| {
        // SAFETY: the caller's out-pointer, passed on.
        let cupti =
            match unsafe { serve_subscriber("cuptiSubscribe", subscriber, callback, userdata) } {
                Ok(cupti) => cupti,
                Err(status) => return status,
            };
        match cupti.raw().subscribe {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(subscriber, callback, userdata) },
            None => NOT_INITIALIZED,
        }
    })
}

/// `cuptiSubscribe_v2(subscriber, callback, userdata, params)`: served as
/// `cuptiSubscribe` (the parameters name the subscriber, for CUPTI 13.3's several).
///
/// # Safety
/// As for `cuptiSubscribe`; `params` is CUPTI's parameter struct or null.
#[no_mangle]
pub unsafe extern "C" fn cuptiSubscribe_v2(
    subscriber: *mut SubscriberHandle,
    callback: Option<CallbackFn>,
    userdata: *mut c_void,
    params: *mut c_void,
) -> RawStatus {
    guard(|| {
        // SAFETY: the caller's out-pointer, passed on.
        let cupti = match unsafe {
            serve_subscriber("cuptiSubscribe_v2", subscriber, callback, userdata)
        } {
            Ok(cupti) => cupti,
            Err(status) => return status,
        };
        type SubscribeV2Fn = unsafe extern "C" fn(
            *mut SubscriberHandle,
            Option<CallbackFn>,
            *mut c_void,
            *mut c_void,
        ) -> RawStatus;
        // SAFETY: the symbol has this signature in every CUPTI that exports it.
        match unsafe { cupti.raw_symbol::<SubscribeV2Fn>("cuptiSubscribe_v2") } {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(subscriber, callback, userdata, params) },
            None => NOT_INITIALIZED,
        }
    })
}

/// # Safety
/// `subscriber` must be a handle `cuptiSubscribe` gave (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiUnsubscribe(subscriber: SubscriberHandle) -> RawStatus {
    guard(|| {
        if let Some(status) = launches::unsubscribe_client(subscriber) {
            return status;
        }
        match real().and_then(|c| c.raw().unsubscribe) {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(subscriber) },
            None => NOT_INITIALIZED,
        }
    })
}

/// # Safety
/// `subscriber` must be a handle `cuptiSubscribe` gave (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiEnableCallback(
    enable: u32,
    subscriber: SubscriberHandle,
    domain: u32,
    cbid: u32,
) -> RawStatus {
    guard(|| {
        if let Some(status) = launches::client_enable_callback(subscriber, enable, domain, cbid) {
            return status;
        }
        match real().and_then(|c| c.raw().enable_callback) {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(enable, subscriber, domain, cbid) },
            None => NOT_INITIALIZED,
        }
    })
}

/// # Safety
/// `subscriber` must be a handle `cuptiSubscribe` gave (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiEnableDomain(
    enable: u32,
    subscriber: SubscriberHandle,
    domain: u32,
) -> RawStatus {
    guard(|| {
        if let Some(status) = launches::client_enable_domain(subscriber, enable, domain) {
            return status;
        }
        match real().and_then(|c| c.raw().enable_domain) {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(enable, subscriber, domain) },
            None => NOT_INITIALIZED,
        }
    })
}

/// # Safety
/// `subscriber` must be a handle `cuptiSubscribe` gave (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiEnableAllDomains(
    enable: u32,
    subscriber: SubscriberHandle,
) -> RawStatus {
    guard(|| {
        if let Some(status) = launches::client_enable_all_domains(subscriber, enable) {
            return status;
        }
        match real().and_then(|c| c.raw().enable_all_domains) {
            // SAFETY: forwarded unchanged to the real function.
            Some(f) => unsafe { f(enable, subscriber) },
            None => NOT_INITIALIZED,
        }
    })
}

/// # Safety
/// `enable` must be valid for a write (the caller's contract with CUPTI).
#[no_mangle]
pub unsafe extern "C" fn cuptiGetCallbackState(
    enable: *mut u32,
    subscriber: SubscriberHandle,
    domain: u32,
    cbid: u32,
) -> RawStatus {
    guard(|| {
        match launches::client_callback_state(subscriber, domain, cbid) {
            Some(Ok(on)) if !enable.is_null() => {
                // SAFETY: non-null, valid for a write by the caller's contract.
                unsafe { enable.write(u32::from(on)) };
                SUCCESS
            }
            Some(Ok(_)) => CuptiStatus::ERROR_INVALID_PARAMETER.0,
            Some(Err(status)) => status,
            None => match real().and_then(|c| c.raw().get_callback_state) {
                // SAFETY: forwarded unchanged to the real function.
                Some(f) => unsafe { f(enable, subscriber, domain, cbid) },
                None => NOT_INITIALIZED,
            },
        }
    })
}
