//! CUPTI's callback API as CUPTI 13.0 has it: one subscriber per process (a second
//! `cuptiSubscribe` fails with MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), callbacks enabled
//! one by one or by domain, and issued at the enter and exit of each API call the
//! controls make, and for resources (executable graphs).

#![allow(non_snake_case)]

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::cupti_types::{CallbackFn, RawStatus, Status, ALL_DOMAINS};
use crate::results::report;
use crate::state::{fake, lock, Counters};

const SUCCESS: RawStatus = Status::SUCCESS.0;

#[derive(Debug)]
struct Subscriber {
    callback: CallbackFn,
    userdata: usize,
    callbacks: HashSet<(u32, u32)>,
    domains: HashSet<u32>,
}

impl Subscriber {
    fn wants(&self, domain: u32, cbid: u32) -> bool {
        self.domains.contains(&domain) || self.callbacks.contains(&(domain, cbid))
    }
}

static SUBSCRIBER: Mutex<Option<Subscriber>> = Mutex::new(None);
/// The one handle the fake gives out: this byte's address.
static HANDLE: u8 = 0;

fn handle() -> *mut c_void {
    (&HANDLE as *const u8).cast_mut().cast()
}

fn with_subscriber(
    subscriber: *mut c_void,
    f: impl FnOnce(&mut Subscriber) -> RawStatus,
) -> RawStatus {
    let mut current = lock(&SUBSCRIBER);
    match current.as_mut() {
        Some(s) if subscriber == handle() => f(s),
        _ => report(Status::ERROR_INVALID_PARAMETER),
    }
}

/// Issues callback `(domain, cbid)` with `data` to the subscriber if it enabled it.
/// Called with no lock of the fake held.
pub(crate) fn issue(domain: u32, cbid: u32, data: *const c_void) {
    let target = {
        let current = lock(&SUBSCRIBER);
        current
            .as_ref()
            .filter(|s| s.wants(domain, cbid))
            .map(|s| (s.callback, s.userdata))
    };
    if let Some((callback, userdata)) = target {
        Counters::bump(&fake().counters.callbacks_issued);
        // SAFETY: the subscriber's callback, called as CUPTI calls it, with data of
        // the type CUPTI documents for the domain, valid for the call.
        unsafe { callback(userdata as *mut c_void, domain, cbid, data) };
    }
}

/// Whether a subscriber would get `(domain, cbid)` (skips building callback data).
pub(crate) fn wanted(domain: u32, cbid: u32) -> bool {
    lock(&SUBSCRIBER)
        .as_ref()
        .is_some_and(|s| s.wants(domain, cbid))
}

pub(crate) fn subscribed() -> bool {
    lock(&SUBSCRIBER).is_some()
}

/// `cuptiSubscribe`.
///
/// # Safety
/// `subscriber` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiSubscribe(
    subscriber: *mut *mut c_void,
    callback: Option<CallbackFn>,
    userdata: *mut c_void,
) -> RawStatus {
    let (false, Some(callback)) = (subscriber.is_null(), callback) else {
        return report(Status::ERROR_INVALID_PARAMETER);
    };
    let mut current = lock(&SUBSCRIBER);
    if current.is_some() {
        return report(Status::ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    }
    *current = Some(Subscriber {
        callback,
        userdata: userdata as usize,
        callbacks: HashSet::new(),
        domains: HashSet::new(),
    });
    // SAFETY: non-null, valid for a write by the caller's contract.
    unsafe { subscriber.write(handle()) };
    SUCCESS
}

/// `cuptiUnsubscribe`.
#[no_mangle]
pub extern "C" fn cuptiUnsubscribe(subscriber: *mut c_void) -> RawStatus {
    let mut current = lock(&SUBSCRIBER);
    if current.is_none() || subscriber != handle() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    *current = None;
    SUCCESS
}

/// `cuptiEnableCallback`.
#[no_mangle]
pub extern "C" fn cuptiEnableCallback(
    enable: u32,
    subscriber: *mut c_void,
    domain: u32,
    cbid: u32,
) -> RawStatus {
    if !ALL_DOMAINS.contains(&domain) {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    with_subscriber(subscriber, |s| {
        if enable != 0 {
            s.callbacks.insert((domain, cbid));
        } else {
            s.callbacks.remove(&(domain, cbid));
        }
        SUCCESS
    })
}

/// `cuptiEnableDomain`.
#[no_mangle]
pub extern "C" fn cuptiEnableDomain(
    enable: u32,
    subscriber: *mut c_void,
    domain: u32,
) -> RawStatus {
    if !ALL_DOMAINS.contains(&domain) {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    with_subscriber(subscriber, |s| {
        s.callbacks.retain(|&(d, _)| d != domain);
        if enable != 0 {
            s.domains.insert(domain);
        } else {
            s.domains.remove(&domain);
        }
        SUCCESS
    })
}

/// `cuptiEnableAllDomains`.
#[no_mangle]
pub extern "C" fn cuptiEnableAllDomains(enable: u32, subscriber: *mut c_void) -> RawStatus {
    with_subscriber(subscriber, |s| {
        s.callbacks.clear();
        s.domains = if enable != 0 {
            ALL_DOMAINS.collect()
        } else {
            HashSet::new()
        };
        SUCCESS
    })
}

/// `cuptiGetCallbackState`.
///
/// # Safety
/// `enable` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiGetCallbackState(
    enable: *mut u32,
    subscriber: *mut c_void,
    domain: u32,
    cbid: u32,
) -> RawStatus {
    if enable.is_null() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    with_subscriber(subscriber, |s| {
        // SAFETY: checked non-null; valid for a write by the caller's contract.
        unsafe { enable.write(u32::from(s.wants(domain, cbid))) };
        SUCCESS
    })
}
