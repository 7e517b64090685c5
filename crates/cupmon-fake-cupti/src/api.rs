//! The CUPTI functions cupmon calls, exported under CUPTI's names with CUPTI's C
//! signatures (see `cupti_types`), behaving as CUPTI 13.0 does.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void};

use cupmon_records::ActivityKind;

use crate::cupti_types::{
    CompleteCallback, RawStatus, RequestCallback, Status, ThreadIdType, FLUSH_FORCED,
};

use crate::emit::{EXTERNAL_IDS, EXTERNAL_KINDS};
use crate::results::{self, report};
use crate::state::{fake, lock, Callbacks, Counters};
use crate::{delivery, reported_version};

const SUCCESS: RawStatus = Status::SUCCESS.0;

/// Writes `value` through `out`, or reports INVALID_PARAMETER for a null `out`.
///
/// # Safety
/// `out` must be null or valid for a write of `T`.
unsafe fn write_out<T>(out: *mut T, value: T) -> RawStatus {
    if out.is_null() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    // SAFETY: non-null, and valid for writes by the caller's contract.
    unsafe { out.write(value) };
    SUCCESS
}

/// `cuptiGetVersion`.
///
/// # Safety
/// `version` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiGetVersion(version: *mut u32) -> RawStatus {
    // SAFETY: forwarded contract.
    unsafe { write_out(version, reported_version()) }
}

/// `cuptiGetResultString`: CUPTI's enumerator name.
///
/// # Safety
/// `text` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiGetResultString(
    status: RawStatus,
    text: *mut *const c_char,
) -> RawStatus {
    match results::name(status) {
        // SAFETY: forwarded contract; the string is static.
        Some(name) => unsafe { write_out(text, name.as_ptr()) },
        None => report(Status::ERROR_INVALID_PARAMETER),
    }
}

/// `cuptiGetErrorMessage`: a sentence about the status.
///
/// # Safety
/// `text` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiGetErrorMessage(
    status: RawStatus,
    text: *mut *const c_char,
) -> RawStatus {
    match results::message(status) {
        // SAFETY: forwarded contract; the string is static.
        Some(message) => unsafe { write_out(text, message.as_ptr()) },
        None => report(Status::ERROR_INVALID_PARAMETER),
    }
}

/// `cuptiActivityRegisterCallbacks`: replaces the callbacks. Buffers already lent
/// go to the new completion callback, as with CUPTI (which is how another client
/// ends up with cupmon's buffers).
#[no_mangle]
pub extern "C" fn cuptiActivityRegisterCallbacks(
    request: Option<RequestCallback>,
    complete: Option<CompleteCallback>,
) -> RawStatus {
    let (Some(request), Some(complete)) = (request, complete) else {
        return report(Status::ERROR_INVALID_PARAMETER);
    };
    let fake = fake();
    lock(&fake.config).callbacks = Some(Callbacks { request, complete });
    Counters::bump(&fake.counters.register_calls);
    crate::controls::stall_action(cupmon_fake_cupti_abi::stall::ENDS_ON_CALLBACKS_REGISTERED);
    delivery::start_thread();
    SUCCESS
}

fn set_kind(kind: u32, enable: bool) -> RawStatus {
    if ActivityKind(kind).name().is_none() || kind == ActivityKind::INVALID.0 {
        return report(Status::ERROR_INVALID_KIND);
    }
    let mut config = lock(&fake().config);
    let was_on = config.is_enabled(kind);
    if enable {
        config.enabled |= 1 << kind;
    } else {
        config.enabled &= !(1 << kind);
    }
    if config.stall == cupmon_fake_cupti_abi::stall::ENDS_ON_KIND_REENABLED {
        if was_on && !enable {
            config.stall_kind_disabled = true;
        } else if enable && config.stall_kind_disabled {
            drop(config);
            crate::controls::stall_action(cupmon_fake_cupti_abi::stall::ENDS_ON_KIND_REENABLED);
            return SUCCESS;
        }
    }
    // The kind overrides earlier per-call settings.
    match ActivityKind(kind) {
        ActivityKind::RUNTIME => config.runtime.set_all(enable),
        ActivityKind::DRIVER => config.driver.set_all(enable),
        _ => {}
    }
    SUCCESS
}

/// `cuptiActivityEnable`. Stricter than CUPTI 13.0, which returns success for a
/// number outside its enum (seen on the H200): the fake says INVALID_KIND.
#[no_mangle]
pub extern "C" fn cuptiActivityEnable(kind: u32) -> RawStatus {
    set_kind(kind, true)
}

/// `cuptiActivityDisable`.
#[no_mangle]
pub extern "C" fn cuptiActivityDisable(kind: u32) -> RawStatus {
    set_kind(kind, false)
}

/// `cuptiActivityEnableContext`: the fake has one context; same as `Enable`.
#[no_mangle]
pub extern "C" fn cuptiActivityEnableContext(_context: *mut c_void, kind: u32) -> RawStatus {
    set_kind(kind, true)
}

/// `cuptiActivityDisableContext`: same as `Disable`.
#[no_mangle]
pub extern "C" fn cuptiActivityDisableContext(_context: *mut c_void, kind: u32) -> RawStatus {
    set_kind(kind, false)
}

/// `cuptiActivityFlushAll`.
#[no_mangle]
pub extern "C" fn cuptiActivityFlushAll(flag: u32) -> RawStatus {
    let fake = fake();
    if lock(&fake.config).callbacks.is_none() {
        return report(Status::ERROR_INVALID_OPERATION);
    }
    Counters::bump(&fake.counters.flush_calls);
    let forced = flag & FLUSH_FORCED != 0;
    if forced {
        crate::controls::stall_action(cupmon_fake_cupti_abi::stall::ENDS_ON_FORCED_FLUSH);
    }
    let delay_us = lock(&fake.config).flush_delay_us;
    if delay_us > 0 && !forced {
        std::thread::sleep(std::time::Duration::from_micros(delay_us));
    }
    delivery::flush(forced, false);
    SUCCESS
}

/// `cuptiActivityFlushPeriod`: remembered (the fake's flushes are the client's).
#[no_mangle]
pub extern "C" fn cuptiActivityFlushPeriod(ms: u32) -> RawStatus {
    lock(&fake().config).flush_period_ms = u64::from(ms);
    SUCCESS
}

/// `cuptiActivitySetAttribute`: the device buffer size (0) and pool limit (2),
/// remembered; other attributes, or a value size other than a `size_t`'s, are
/// INVALID_PARAMETER.
///
/// # Safety
/// `size` must be null or valid for reads; `value` for reads of `*size` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuptiActivitySetAttribute(
    attribute: u32,
    size: *mut usize,
    value: *mut c_void,
) -> RawStatus {
    // SAFETY: checked non-null; readable by the caller's contract.
    if size.is_null() || value.is_null() || unsafe { size.read() } != size_of::<usize>() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    // SAFETY: `value` holds a size_t (checked above).
    let value = unsafe { value.cast::<usize>().read_unaligned() } as u64;
    let mut config = lock(&fake().config);
    match attribute {
        0 => config.device_buffer_size = value,
        2 => config.device_buffer_pool_limit = value,
        _ => return report(Status::ERROR_INVALID_PARAMETER),
    }
    SUCCESS
}

/// `cuptiActivityGetNumDroppedRecords`: records dropped for want of a buffer
/// since the last call (the fake keeps one count for every context and stream).
///
/// # Safety
/// `dropped` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiActivityGetNumDroppedRecords(
    _context: *mut c_void,
    _stream_id: u32,
    dropped: *mut usize,
) -> RawStatus {
    if dropped.is_null() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    let count = std::mem::take(&mut lock(&fake().buffers).dropped);
    // SAFETY: forwarded contract.
    unsafe { write_out(dropped, count as usize) }
}

/// `cuptiActivityEnableRuntimeApi`.
#[no_mangle]
pub extern "C" fn cuptiActivityEnableRuntimeApi(cbid: u32, enable: u8) -> RawStatus {
    lock(&fake().config)
        .runtime
        .overrides
        .insert(cbid, enable != 0);
    SUCCESS
}

/// `cuptiActivityEnableDriverApi`.
#[no_mangle]
pub extern "C" fn cuptiActivityEnableDriverApi(cbid: u32, enable: u8) -> RawStatus {
    lock(&fake().config)
        .driver
        .overrides
        .insert(cbid, enable != 0);
    SUCCESS
}

/// `cuptiSetThreadIdType`.
#[no_mangle]
pub extern "C" fn cuptiSetThreadIdType(kind: u32) -> RawStatus {
    if ThreadIdType(kind).name().is_none() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    lock(&fake().config).thread_id_type = kind;
    SUCCESS
}

/// `cuptiGetTimestamp`: CLOCK_REALTIME in ns, CUPTI's default clock.
///
/// # Safety
/// `timestamp` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiGetTimestamp(timestamp: *mut u64) -> RawStatus {
    // SAFETY: forwarded contract.
    unsafe { write_out(timestamp, crate::clock::now()) }
}

/// `cuptiActivityRegisterTimestampCallback`: from now on every timestamp (records and
/// `cuptiGetTimestamp`) is the callback's, as torch.profiler's Kineto makes it.
#[no_mangle]
pub extern "C" fn cuptiActivityRegisterTimestampCallback(
    callback: Option<extern "C" fn() -> u64>,
) -> RawStatus {
    crate::clock::set_callback(callback);
    SUCCESS
}

/// `cuptiActivityPushExternalCorrelationId` (per thread).
#[no_mangle]
pub extern "C" fn cuptiActivityPushExternalCorrelationId(kind: u32, id: u64) -> RawStatus {
    if !EXTERNAL_KINDS.contains(&kind) {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    EXTERNAL_IDS.with_borrow_mut(|stacks| stacks[kind as usize].push(id));
    SUCCESS
}

/// `cuptiActivityPopExternalCorrelationId` (per thread).
///
/// # Safety
/// `last_id` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiActivityPopExternalCorrelationId(
    kind: u32,
    last_id: *mut u64,
) -> RawStatus {
    if !EXTERNAL_KINDS.contains(&kind) {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    let Some(id) = EXTERNAL_IDS.with_borrow_mut(|stacks| stacks[kind as usize].pop()) else {
        return report(Status::ERROR_QUEUE_EMPTY);
    };
    if last_id.is_null() {
        return SUCCESS; // CUPTI: "can be NULL"
    }
    // SAFETY: forwarded contract.
    unsafe { write_out(last_id, id) }
}

/// `cuptiGetLastError`.
#[no_mangle]
pub extern "C" fn cuptiGetLastError() -> RawStatus {
    results::take_last_error()
}

/// `cuptiFinalize`: delivers everything, then forgets kinds and callbacks, so
/// later activity is dropped, roughly as CUPTI after a finalize. Counted in the
/// stats so tests can see whether a call got through.
#[no_mangle]
pub extern "C" fn cuptiFinalize() -> RawStatus {
    let fake = fake();
    Counters::bump(&fake.counters.finalize_calls);
    delivery::flush(true, true);
    let mut config = lock(&fake.config);
    config.enabled = 0;
    config.runtime.set_all(false);
    config.driver.set_all(false);
    config.callbacks = None;
    SUCCESS
}
