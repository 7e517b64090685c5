//! The `cupmonFake*` control functions tests call (through
//! `cupmon_cupti::testing::FakeControls`) to make activity and inspect the fake.

#![allow(non_snake_case)]

use std::ffi::{c_char, CStr};

use cupmon_cupti::raw::RawStatus;
use cupmon_cupti::testing::FakeStats;
use cupmon_cupti::{cbid, CuptiStatus};
use cupmon_records::{ApiDomain, Record};

use crate::emit::{calls, Work};
use crate::results::report;
use crate::state::{fake, lock};
use crate::{clock, delivery, names};

const SUCCESS: RawStatus = CuptiStatus::SUCCESS.0;

/// `count` `cudaLaunchKernel` calls of kernel `name` on `stream_id`.
///
/// # Safety
/// `name` must be null or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cupmonFakeLaunchKernels(
    count: u32,
    stream_id: u32,
    name: *const c_char,
) -> RawStatus {
    if name.is_null() {
        return report(CuptiStatus::ERROR_INVALID_PARAMETER);
    }
    // SAFETY: a valid C string by the caller's contract; copied by `intern`.
    let name_ptr = names::intern(unsafe { CStr::from_ptr(name) });
    calls(
        ApiDomain::Runtime,
        cbid::RUNTIME_LAUNCH_KERNEL,
        Work::Kernel {
            stream_id,
            name_ptr,
        },
        count,
    );
    SUCCESS
}

/// `count` `cudaMemcpyAsync` calls copying `bytes` (`copy_kind`: CUPTI's memcpy kind).
#[no_mangle]
pub extern "C" fn cupmonFakeMemcpy(
    count: u32,
    bytes: u64,
    copy_kind: u32,
    stream_id: u32,
) -> RawStatus {
    let Ok(copy_kind) = u8::try_from(copy_kind) else {
        return report(CuptiStatus::ERROR_INVALID_PARAMETER);
    };
    calls(
        ApiDomain::Runtime,
        cbid::RUNTIME_MEMCPY_ASYNC,
        Work::Memcpy {
            stream_id,
            bytes,
            copy_kind,
        },
        count,
    );
    SUCCESS
}

/// `count` `cudaMemsetAsync` calls setting `bytes` to `value`.
#[no_mangle]
pub extern "C" fn cupmonFakeMemset(
    count: u32,
    bytes: u64,
    value: u32,
    stream_id: u32,
) -> RawStatus {
    calls(
        ApiDomain::Runtime,
        cbid::RUNTIME_MEMSET_ASYNC,
        Work::Memset {
            stream_id,
            bytes,
            value,
        },
        count,
    );
    SUCCESS
}

/// One runtime API call `cbid` without GPU work.
#[no_mangle]
pub extern "C" fn cupmonFakeRuntimeCall(cbid: u32) -> RawStatus {
    calls(ApiDomain::Runtime, cbid, Work::None, 1);
    SUCCESS
}

/// One driver API call `cbid` without GPU work.
#[no_mangle]
pub extern "C" fn cupmonFakeDriverCall(cbid: u32) -> RawStatus {
    calls(ApiDomain::Driver, cbid, Work::None, 1);
    SUCCESS
}

/// Delay before each asynchronous delivery of a full buffer.
#[no_mangle]
pub extern "C" fn cupmonFakeSetCompletionDelayUs(delay_us: u64) {
    lock(&fake().config).completion_delay_us = delay_us;
}

/// While non-zero, launched kernels stay unfinished until `cupmonFakeFinishKernels`.
#[no_mangle]
pub extern "C" fn cupmonFakeSetKernelsPending(pending: u32) {
    lock(&fake().config).kernels_pending = pending != 0;
}

/// Gives every unfinished kernel its end time; their buffers become deliverable.
#[no_mangle]
pub extern "C" fn cupmonFakeFinishKernels() -> RawStatus {
    let fake = fake();
    let mut buffers = lock(&fake.buffers);
    let buffers = &mut *buffers;
    for held in buffers
        .open
        .iter_mut()
        .chain(buffers.full.iter_mut())
        .flat_map(|b| b.records.iter_mut())
    {
        if let (true, Record::Kernel(kernel)) = (held.pending, &mut held.record) {
            kernel.end = clock::now();
            kernel.completed = kernel.end;
            held.pending = false;
        }
    }
    fake.buffers_changed.notify_all();
    SUCCESS
}

/// Calls the completion callback with a buffer the client never lent.
#[no_mangle]
pub extern "C" fn cupmonFakeDeliverForeignBuffer() -> RawStatus {
    if delivery::deliver_foreign_buffer() {
        SUCCESS
    } else {
        report(CuptiStatus::ERROR_INVALID_OPERATION)
    }
}

/// Copies the counters into `out` (at most `size` bytes of `FakeStats`).
///
/// # Safety
/// `out` must be null or valid for writes of `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn cupmonFakeStats(out: *mut FakeStats, size: usize) -> RawStatus {
    if out.is_null() {
        return report(CuptiStatus::ERROR_INVALID_PARAMETER);
    }
    let stats = fake().stats();
    let size = size.min(size_of::<FakeStats>());
    // SAFETY: `out` is valid for `size` bytes (caller), `stats` for its own size;
    // a shorter `size` (an older caller's struct) copies a prefix.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&stats as *const FakeStats).cast::<u8>(),
            out.cast::<u8>(),
            size,
        )
    };
    SUCCESS
}

/// Returns every lent buffer to the client (forced flush), then clears kinds,
/// filters, thread-id type, dropped counts, delay, pending kernels and counters.
/// The callbacks stay registered.
#[no_mangle]
pub extern "C" fn cupmonFakeReset() {
    let fake = fake();
    {
        let mut config = lock(&fake.config);
        config.kernels_pending = false;
        config.completion_delay_us = 0;
    }
    delivery::flush(true, true);
    {
        let mut config = lock(&fake.config);
        config.enabled = 0;
        config.runtime.set_all(false);
        config.driver.set_all(false);
        config.thread_id_type = 0;
    }
    lock(&fake.buffers).dropped = 0;
    fake.counters.reset();
}
