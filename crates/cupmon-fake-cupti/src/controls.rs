//! The `cupmonFake*` control functions tests call (through
//! `cupmon_test_support::FakeControls`) to make activity and inspect the fake.
//! Their names and types are declared in `cupmon-fake-cupti-abi`; the block
//! after the functions checks these definitions against them.

#![allow(non_snake_case)]

use std::ffi::{c_char, CStr};

use cupmon_fake_cupti_abi::{self as abi, cbid, mem_pool, stall, FakeStats};
use cupmon_records::{ApiDomain, Record};

use crate::cupti_types::{RawStatus, Status};
use crate::emit::{calls, calls_with, Work};
use crate::memory::MemoryCall;
use crate::results::report;
use crate::state::{fake, lock};
use crate::{clock, delivery, graphs, names};

const SUCCESS: RawStatus = Status::SUCCESS.0;

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
        return report(Status::ERROR_INVALID_PARAMETER);
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
        return report(Status::ERROR_INVALID_PARAMETER);
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

/// One `cudaMalloc` (`cudaMallocAsync` when `is_async` is non-zero) of `bytes`
/// on `device` that returns `address`: its API record and a MEMORY2 allocation
/// record, as far as those are enabled. A zero size or address, or an address
/// already live on the device, is INVALID_PARAMETER.
#[no_mangle]
pub extern "C" fn cupmonFakeMalloc(
    device: u32,
    bytes: u64,
    address: u64,
    is_async: u32,
    stream_id: u32,
) -> RawStatus {
    if bytes == 0 || address == 0 || lock(&fake().memory).is_live(device, address) {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    let is_async = is_async != 0;
    let cbid = if is_async {
        cbid::RUNTIME_MALLOC_ASYNC
    } else {
        cbid::RUNTIME_MALLOC
    };
    let call = MemoryCall::Malloc {
        device,
        bytes,
        address,
        is_async,
        stream_id,
    };
    calls(ApiDomain::Runtime, cbid, Work::Memory(call), 1);
    SUCCESS
}

/// One `cudaFree` (`cudaFreeAsync`) of a live allocation: its API record and a
/// MEMORY2 release record carrying the allocation's size. An address that is
/// not live on the device is INVALID_PARAMETER.
#[no_mangle]
pub extern "C" fn cupmonFakeFree(
    device: u32,
    address: u64,
    is_async: u32,
    stream_id: u32,
) -> RawStatus {
    if !lock(&fake().memory).is_live(device, address) {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    let is_async = is_async != 0;
    let cbid = if is_async {
        cbid::RUNTIME_FREE_ASYNC
    } else {
        cbid::RUNTIME_FREE
    };
    let call = MemoryCall::Free {
        device,
        address,
        is_async,
        stream_id,
    };
    calls(ApiDomain::Runtime, cbid, Work::Memory(call), 1);
    SUCCESS
}

/// One `cudaMemPoolCreate`, `cudaMemPoolDestroy` or `cudaMemPoolTrimTo`
/// (`operation`: CUPTI's pool operation type) of the pool at `address` of
/// `size` bytes: its API record and a MEMORY_POOL record. `min_bytes_to_keep`
/// is the trim's argument (0 for the others).
#[no_mangle]
pub extern "C" fn cupmonFakeMemPool(
    operation: u32,
    device: u32,
    address: u64,
    size: u64,
    min_bytes_to_keep: u64,
) -> RawStatus {
    let cbid = match operation {
        mem_pool::CREATED => cbid::RUNTIME_MEM_POOL_CREATE,
        mem_pool::DESTROYED => cbid::RUNTIME_MEM_POOL_DESTROY,
        mem_pool::TRIMMED => cbid::RUNTIME_MEM_POOL_TRIM_TO,
        _ => return report(Status::ERROR_INVALID_PARAMETER),
    };
    if address == 0 {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    let min_bytes_to_keep = if operation == mem_pool::TRIMMED {
        min_bytes_to_keep
    } else {
        0
    };
    let call = MemoryCall::Pool {
        operation,
        device,
        address,
        size,
        min_bytes_to_keep,
    };
    calls(ApiDomain::Runtime, cbid, Work::Memory(call), 1);
    SUCCESS
}

/// `count` launches of kernel `name` through API call `cbid` of `domain` (1: driver,
/// 2: runtime), each returning `result` (a failed launch makes no records).
///
/// # Safety
/// `name` must be null or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cupmonFakeLaunchKernelsVia(
    domain: u32,
    cbid: u32,
    count: u32,
    stream_id: u32,
    name: *const c_char,
    result: i32,
) -> RawStatus {
    let domain = match domain {
        1 => ApiDomain::Driver,
        2 => ApiDomain::Runtime,
        _ => return report(Status::ERROR_INVALID_PARAMETER),
    };
    if name.is_null() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    // SAFETY: a valid C string by the caller's contract; copied by `intern`.
    let name_ptr = names::intern(unsafe { CStr::from_ptr(name) });
    let work = Work::Kernel {
        stream_id,
        name_ptr,
    };
    calls_with(domain, cbid, work, count, std::ptr::null(), result);
    SUCCESS
}

/// Instantiates a graph (see `cupmon_fake_cupti_abi::GRAPH_INSTANTIATE`).
///
/// # Safety
/// `out_exec` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cupmonFakeGraphInstantiate(
    kernel_nodes: u32,
    child_kernel_nodes: u32,
    conditional: u32,
    out_exec: *mut u64,
) -> RawStatus {
    if out_exec.is_null() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    let exec = graphs::instantiate(kernel_nodes, child_kernel_nodes, conditional != 0);
    // SAFETY: checked non-null; valid for a write by the caller's contract.
    unsafe { out_exec.write(exec) };
    SUCCESS
}

/// Instantiates the kernel nodes captured so far (see
/// `cupmon_fake_cupti_abi::GRAPH_INSTANTIATE_CAPTURED`).
///
/// # Safety
/// `out_exec` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cupmonFakeGraphInstantiateCaptured(out_exec: *mut u64) -> RawStatus {
    if out_exec.is_null() {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    let exec = graphs::instantiate_captured();
    // SAFETY: checked non-null; valid for a write by the caller's contract.
    unsafe { out_exec.write(exec) };
    SUCCESS
}

/// `cudaGraphLaunch`'s parameters as CUPTI's callback data points at them.
#[repr(C)]
struct GraphLaunchParams {
    exec: *mut std::ffi::c_void,
    stream: *mut std::ffi::c_void,
}

/// `count` launches of `exec` (see `cupmon_fake_cupti_abi::GRAPH_LAUNCH`).
///
/// # Safety
/// `name` must be null or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cupmonFakeGraphLaunch(
    exec: u64,
    count: u32,
    stream_id: u32,
    name: *const c_char,
) -> RawStatus {
    let (Some(kernels), false) = (graphs::kernels_of(exec), name.is_null()) else {
        return report(Status::ERROR_INVALID_PARAMETER);
    };
    // SAFETY: a valid C string by the caller's contract; copied by `intern`.
    let name_ptr = names::intern(unsafe { CStr::from_ptr(name) });
    let params = GraphLaunchParams {
        exec: exec as usize as *mut std::ffi::c_void,
        stream: stream_id as usize as *mut std::ffi::c_void,
    };
    let work = Work::Graph {
        stream_id,
        name_ptr,
        kernels,
        exec,
    };
    let params_ptr = (&params as *const GraphLaunchParams).cast();
    calls_with(
        ApiDomain::Runtime,
        cbid::RUNTIME_GRAPH_LAUNCH,
        work,
        count,
        params_ptr,
        0,
    );
    SUCCESS
}

/// `count` kernel launches captured into a graph (see
/// `cupmon_fake_cupti_abi::CAPTURE_KERNELS`).
#[no_mangle]
pub extern "C" fn cupmonFakeCaptureKernels(count: u32, _stream_id: u32) -> RawStatus {
    crate::emit::captured_calls(cbid::RUNTIME_LAUNCH_KERNEL, count);
    SUCCESS
}

/// Destroys an executable graph.
#[no_mangle]
pub extern "C" fn cupmonFakeGraphDestroy(exec: u64) -> RawStatus {
    if graphs::destroy(exec) {
        SUCCESS
    } else {
        report(Status::ERROR_INVALID_PARAMETER)
    }
}

/// Starts (or, with `stall::NONE`, ends) a stall: see `cupmon_fake_cupti_abi::stall`.
#[no_mangle]
pub extern "C" fn cupmonFakeStall(mode: u32) -> RawStatus {
    if mode > stall::FOREVER {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    // Under the `emit` lock: no launch is between its record and its buffer while
    // the buffers are handed back and the stall begins, so every record is either
    // delivered here or counted as lost in the stall (without it a record emitted
    // in between sat in a buffer that was never delivered and never counted, and
    // an append could find its open buffer taken: flaky accounting tests).
    let _emit = lock(&fake().emit);
    if mode != stall::NONE {
        // What the H200 showed: CUPTI holds none of the client's buffers.
        delivery::flush(true, true);
    }
    let mut config = lock(&fake().config);
    config.stall = mode;
    config.stall_kind_disabled = false;
    SUCCESS
}

/// Ends a stall waiting for `action` (a `stall::ENDS_ON_*` value).
pub(crate) fn stall_action(action: u32) {
    let fake = fake();
    let mut config = lock(&fake.config);
    if config.stall != stall::NONE && config.stall == action {
        config.stall = stall::NONE;
        config.stall_kind_disabled = false;
        crate::state::Counters::bump(&fake.counters.stall_recoveries);
    }
}

/// Delay before each asynchronous delivery of a full buffer.
#[no_mangle]
pub extern "C" fn cupmonFakeSetCompletionDelayUs(delay_us: u64) {
    lock(&fake().config).completion_delay_us = delay_us;
}

/// Delay at the start of each plain (not forced) `cuptiActivityFlushAll`.
#[no_mangle]
pub extern "C" fn cupmonFakeSetFlushDelayUs(delay_us: u64) {
    lock(&fake().config).flush_delay_us = delay_us;
}

/// While non-zero, launched kernels stay unfinished until `cupmonFakeFinishKernels`.
#[no_mangle]
pub extern "C" fn cupmonFakeSetKernelsPending(pending: u32) {
    lock(&fake().config).kernels_pending = pending != 0;
}

/// Kernels launched from now on have a grid of `grid_x` blocks (0: the default, 128).
#[no_mangle]
pub extern "C" fn cupmonFakeSetGridX(grid_x: u32) {
    lock(&fake().config).kernel_grid_x = grid_x;
}

/// One synchronising API call `cbid` of `domain` (1 driver, 2 runtime) that blocks
/// for `ms` milliseconds between its enter and exit callbacks.
#[no_mangle]
pub extern "C" fn cupmonFakeBlockingCall(domain: u32, cbid: u32, ms: u64) -> RawStatus {
    if !crate::cupti_types::ALL_DOMAINS.contains(&domain) {
        return report(Status::ERROR_INVALID_PARAMETER);
    }
    crate::emit::blocking_call(domain, cbid, ms);
    SUCCESS
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
        report(Status::ERROR_INVALID_OPERATION)
    }
}

/// Copies the counters into `out` (at most `size` bytes of `FakeStats`).
///
/// # Safety
/// `out` must be null or valid for writes of `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn cupmonFakeStats(out: *mut FakeStats, size: usize) -> RawStatus {
    if out.is_null() {
        return report(Status::ERROR_INVALID_PARAMETER);
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
/// filters, thread-id type, dropped counts, delay, pending kernels, live
/// allocations and counters.
/// The callbacks stay registered.
#[no_mangle]
pub extern "C" fn cupmonFakeReset() {
    let fake = fake();
    clock::set_callback(None);
    {
        let mut config = lock(&fake.config);
        config.kernels_pending = false;
        config.kernel_grid_x = 0;
        config.completion_delay_us = 0;
        config.flush_delay_us = 0;
        config.stall = stall::NONE;
        config.stall_kind_disabled = false;
        config.flush_period_ms = 0;
        config.device_buffer_size = 0;
        config.device_buffer_pool_limit = 0;
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
    lock(&fake.memory).clear();
    fake.counters.reset();
}

// Each control has the type the test support calls it through.
const _: () = {
    let _: abi::LaunchKernelsFn = cupmonFakeLaunchKernels;
    let _: abi::MemcpyFn = cupmonFakeMemcpy;
    let _: abi::MemsetFn = cupmonFakeMemset;
    let _: abi::RuntimeCallFn = cupmonFakeRuntimeCall;
    let _: abi::DriverCallFn = cupmonFakeDriverCall;
    let _: abi::MallocFn = cupmonFakeMalloc;
    let _: abi::FreeFn = cupmonFakeFree;
    let _: abi::MemPoolFn = cupmonFakeMemPool;
    let _: abi::SetCompletionDelayUsFn = cupmonFakeSetCompletionDelayUs;
    let _: abi::SetFlushDelayUsFn = cupmonFakeSetFlushDelayUs;
    let _: abi::SetKernelsPendingFn = cupmonFakeSetKernelsPending;
    let _: abi::FinishKernelsFn = cupmonFakeFinishKernels;
    let _: abi::DeliverForeignBufferFn = cupmonFakeDeliverForeignBuffer;
    let _: abi::StatsFn = cupmonFakeStats;
    let _: abi::ResetFn = cupmonFakeReset;
    let _: abi::LaunchKernelsViaFn = cupmonFakeLaunchKernelsVia;
    let _: abi::GraphInstantiateFn = cupmonFakeGraphInstantiate;
    let _: abi::GraphLaunchFn = cupmonFakeGraphLaunch;
    let _: abi::GraphDestroyFn = cupmonFakeGraphDestroy;
    let _: abi::StallFn = cupmonFakeStall;
    let _: abi::CaptureKernelsFn = cupmonFakeCaptureKernels;
    let _: abi::SetGridXFn = cupmonFakeSetGridX;
    let _: abi::BlockingCallFn = cupmonFakeBlockingCall;
    let _: abi::GraphInstantiateCapturedFn = cupmonFakeGraphInstantiateCaptured;
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_carry_cuptis_callback_ids() {
        let runtime = [
            (cbid::RUNTIME_MALLOC, "cudaMalloc"),
            (cbid::RUNTIME_FREE, "cudaFree"),
            (cbid::RUNTIME_MEMCPY_ASYNC, "cudaMemcpyAsync"),
            (cbid::RUNTIME_MEMSET_ASYNC, "cudaMemsetAsync"),
            (cbid::RUNTIME_LAUNCH_KERNEL, "cudaLaunchKernel"),
            (cbid::RUNTIME_MALLOC_ASYNC, "cudaMallocAsync"),
            (cbid::RUNTIME_FREE_ASYNC, "cudaFreeAsync"),
            (cbid::RUNTIME_MEM_POOL_TRIM_TO, "cudaMemPoolTrimTo"),
            (cbid::RUNTIME_MEM_POOL_CREATE, "cudaMemPoolCreate"),
            (cbid::RUNTIME_MEM_POOL_DESTROY, "cudaMemPoolDestroy"),
        ];
        for (id, name) in runtime {
            assert_eq!(ApiDomain::Runtime.known_name(id), Some(name), "cbid {id}");
        }
        assert_eq!(
            ApiDomain::Driver.known_name(cbid::DRIVER_LAUNCH_KERNEL),
            Some("cuLaunchKernel")
        );
        assert_eq!(
            ApiDomain::Runtime.known_name(cbid::RUNTIME_GRAPH_LAUNCH),
            Some("cudaGraphLaunch")
        );
    }
}
