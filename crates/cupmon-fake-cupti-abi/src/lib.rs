//! The control interface of cupmon's fake libcupti, declared once for both
//! sides: `cupmon-fake-cupti` exports the `cupmonFake*` functions (and checks
//! its definitions against the types here when it compiles), and
//! `cupmon-test-support` looks them up by the names here and calls them
//! through these types.
//!
//! A crate without dependencies, so that the fake does not link the crate it
//! fakes (`cupmon-cupti`), and without `unsafe` (it only names types).

use std::ffi::c_char;

pub mod cbid;

/// Environment variable: the API version the fake's `cuptiGetVersion` reports
/// (default 130001, CUPTI 13.0 update 1), read at each call. The records it writes
/// then use that version's layout when cupmon-records knows it, else 13.0's: a
/// version cupmon does not support must be refused before any record is read.
pub const VERSION_ENV: &str = "CUPMON_FAKE_CUPTI_VERSION";

/// What the controls return: a `CUptiResult` (0 = success; the fake's
/// `cuptiGetResultString` names the others).
pub type Status = u32;

/// Counters of the fake, filled by `cupmonFakeStats`. A caller passes its size,
/// so a shorter (older) struct gets a prefix: add fields at the end only.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FakeStats {
    /// Records written into buffers.
    pub records_emitted: u64,
    /// Records dropped for want of a buffer, in total (not reset by
    /// `cuptiActivityGetNumDroppedRecords`).
    pub records_dropped: u64,
    /// Buffer requests made to the client, and how many it refused (no buffer).
    pub buffers_requested: u64,
    pub buffers_refused: u64,
    /// Buffers handed back through the completion callback.
    pub buffers_delivered: u64,
    /// Full buffers waiting for the delivery thread or for pending kernels.
    pub buffers_waiting: u64,
    /// Buffers the fake allocated itself and passed to the completion callback.
    pub foreign_buffers_delivered: u64,
    pub flush_calls: u64,
    pub register_calls: u64,
    /// `cuptiFinalize` calls that reached the fake.
    pub finalize_calls: u64,
    /// Bit `k` set when activity kind `k` (< 64) is enabled.
    pub enabled_kinds: u64,
    /// The last `cuptiSetThreadIdType` value.
    pub thread_id_type: u64,
    /// Kernels launched while "pending" and not finished yet.
    pub pending_kernels: u64,
    /// Allocations made through `cupmonFakeMalloc` and not freed yet.
    pub live_allocations: u64,
    /// Callbacks issued to the subscriber (enter and exit count one each).
    pub callbacks_issued: u64,
    /// Records lost, neither written nor counted as dropped, during stalls.
    pub records_lost_in_stall: u64,
    /// The stall in force ([`stall`]; 0: none).
    pub stalled: u64,
    /// Stalls ended by the action they waited for.
    pub stall_recoveries: u64,
    /// CUPTI's settings as last set (0: never): `cuptiActivityFlushPeriod`'s
    /// milliseconds, the device buffer size and pool limit attributes.
    pub flush_period_ms: u64,
    pub device_buffer_size: u64,
    pub device_buffer_pool_limit: u64,
    /// 1 while a callback subscriber is registered.
    pub subscribed: u64,
}

/// The action that ends a stall of `cupmonFakeStall`. While a stall lasts the fake
/// holds none of the client's buffers, asks for none and delivers nothing, and every
/// record is lost without being counted as dropped (what CUPTI 13.0 did on the H200 at
/// about 1 M kernels/s sustained).
pub mod stall {
    /// No stall (ends one at once).
    pub const NONE: u32 = 0;
    /// A forced `cuptiActivityFlushAll` ends it.
    pub const ENDS_ON_FORCED_FLUSH: u32 = 1;
    /// Disabling and enabling an activity kind ends it.
    pub const ENDS_ON_KIND_REENABLED: u32 = 2;
    /// Registering the activity callbacks again ends it.
    pub const ENDS_ON_CALLBACKS_REGISTERED: u32 = 3;
    /// Nothing ends it.
    pub const FOREVER: u32 = 4;
}

/// `CUpti_ActivityMemoryPoolOperationType`, the `operation` of `cupmonFakeMemPool`.
pub mod mem_pool {
    pub const CREATED: u32 = 1;
    pub const DESTROYED: u32 = 2;
    pub const TRIMMED: u32 = 3;
}

/// The address the fake reports as device `device`'s default memory pool: the
/// pool that stream-ordered (`cudaMallocAsync`) allocations come from.
pub const fn default_pool_address(device: u32) -> u64 {
    0x7e00_0000_0000 + device as u64 * 0x1_0000_0000
}

/// Declares each control function: the name it is exported under and its type.
macro_rules! controls {
    ($($(#[$doc:meta])* $name:ident, $ty:ident = $symbol:literal: $fn:ty;)*) => {
        $(
            $(#[$doc])*
            pub const $name: &str = $symbol;
            #[doc = concat!("The type of `", $symbol, "`.")]
            pub type $ty = $fn;
        )*
    };
}

controls! {
    /// `(count, stream_id, name)`: `count` `cudaLaunchKernel` calls of kernel
    /// `name` (a NUL-terminated string the fake copies).
    LAUNCH_KERNELS, LaunchKernelsFn = "cupmonFakeLaunchKernels":
        unsafe extern "C" fn(u32, u32, *const c_char) -> Status;
    /// `(count, bytes, copy_kind, stream_id)`: `count` `cudaMemcpyAsync` calls
    /// (`copy_kind`: `CUpti_ActivityMemcpyKind`, 1 = HtoD).
    MEMCPY, MemcpyFn = "cupmonFakeMemcpy": unsafe extern "C" fn(u32, u64, u32, u32) -> Status;
    /// `(count, bytes, value, stream_id)`: `count` `cudaMemsetAsync` calls.
    MEMSET, MemsetFn = "cupmonFakeMemset": unsafe extern "C" fn(u32, u64, u32, u32) -> Status;
    /// `(cbid)`: one runtime API call without GPU work.
    RUNTIME_CALL, RuntimeCallFn = "cupmonFakeRuntimeCall": unsafe extern "C" fn(u32) -> Status;
    /// `(cbid)`: one driver API call without GPU work.
    DRIVER_CALL, DriverCallFn = "cupmonFakeDriverCall": unsafe extern "C" fn(u32) -> Status;
    /// `(device, bytes, address, is_async, stream_id)`: one `cudaMalloc` (or
    /// `cudaMallocAsync` when `is_async` is non-zero) returning `address`.
    MALLOC, MallocFn = "cupmonFakeMalloc":
        unsafe extern "C" fn(u32, u64, u64, u32, u32) -> Status;
    /// `(device, address, is_async, stream_id)`: one `cudaFree` (or
    /// `cudaFreeAsync`) of an allocation made by `cupmonFakeMalloc`.
    FREE, FreeFn = "cupmonFakeFree": unsafe extern "C" fn(u32, u64, u32, u32) -> Status;
    /// `(operation, device, address, size, min_bytes_to_keep)`: one
    /// `cudaMemPoolCreate`, `cudaMemPoolDestroy` or `cudaMemPoolTrimTo` (see
    /// [`mem_pool`]); `min_bytes_to_keep` is the trim's argument.
    MEM_POOL, MemPoolFn = "cupmonFakeMemPool":
        unsafe extern "C" fn(u32, u32, u64, u64, u64) -> Status;
    /// `(delay_us)`: delay before each asynchronous delivery of a full buffer.
    SET_COMPLETION_DELAY_US, SetCompletionDelayUsFn = "cupmonFakeSetCompletionDelayUs":
        unsafe extern "C" fn(u64);
    /// `(delay_us)`: delay at the start of each plain `cuptiActivityFlushAll`.
    SET_FLUSH_DELAY_US, SetFlushDelayUsFn = "cupmonFakeSetFlushDelayUs":
        unsafe extern "C" fn(u64);
    /// `(pending)`: while non-zero, launched kernels stay unfinished.
    SET_KERNELS_PENDING, SetKernelsPendingFn = "cupmonFakeSetKernelsPending":
        unsafe extern "C" fn(u32);
    /// Gives every unfinished kernel its end time.
    FINISH_KERNELS, FinishKernelsFn = "cupmonFakeFinishKernels": unsafe extern "C" fn() -> Status;
    /// Calls the completion callback with a buffer the client never lent.
    DELIVER_FOREIGN_BUFFER, DeliverForeignBufferFn = "cupmonFakeDeliverForeignBuffer":
        unsafe extern "C" fn() -> Status;
    /// `(out, size)`: copies at most `size` bytes of [`FakeStats`] to `out`.
    STATS, StatsFn = "cupmonFakeStats": unsafe extern "C" fn(*mut FakeStats, usize) -> Status;
    /// Flushes everything to the client, then clears the fake's state but
    /// the registered callbacks (and the callback subscriber with what it enabled).
    RESET, ResetFn = "cupmonFakeReset": unsafe extern "C" fn();
    /// `(domain, cbid, count, stream_id, name, result)`: `count` launches of kernel
    /// `name` by API call `cbid` of `domain` (1 driver, 2 runtime) returning `result`
    /// (not 0: the launch fails and runs nothing).
    LAUNCH_KERNELS_VIA, LaunchKernelsViaFn = "cupmonFakeLaunchKernelsVia":
        unsafe extern "C" fn(u32, u32, u32, u32, *const c_char, i32) -> Status;
    /// `(kernel_nodes, child_kernel_nodes, conditional, out_exec)`: instantiates a
    /// graph of `kernel_nodes` kernel nodes and an empty node, a child graph of
    /// `child_kernel_nodes` kernel nodes when non-zero, a conditional node (whose body
    /// runs one kernel per launch) when `conditional` is non-zero; issues the
    /// graph-exec-created callback and writes the executable graph to `out_exec`.
    GRAPH_INSTANTIATE, GraphInstantiateFn = "cupmonFakeGraphInstantiate":
        unsafe extern "C" fn(u32, u32, u32, *mut u64) -> Status;
    /// `(exec, count, stream_id, name)`: `count` `cudaGraphLaunch` calls of `exec`, each
    /// running its kernels (all named `name`) under the launch's correlation id.
    GRAPH_LAUNCH, GraphLaunchFn = "cupmonFakeGraphLaunch":
        unsafe extern "C" fn(u64, u32, u32, *const c_char) -> Status;
    /// `(exec)`: destroys an executable graph (graph-exec-destroy callback first).
    GRAPH_DESTROY, GraphDestroyFn = "cupmonFakeGraphDestroy": unsafe extern "C" fn(u64) -> Status;
    /// `(count, stream_id)`: `count` `cudaLaunchKernel` calls made while the stream is
    /// captured into a graph: each adds a kernel node (graph-node-created callback
    /// inside the call) and runs nothing.
    CAPTURE_KERNELS, CaptureKernelsFn = "cupmonFakeCaptureKernels":
        unsafe extern "C" fn(u32, u32) -> Status;
    /// `(out_exec)`: instantiates the kernel nodes captured (`cupmonFakeCaptureKernels`)
    /// since the last such call: a graph-node-cloned callback per node (its node in the
    /// executable graph, whose id the launches' kernel records carry as `graphNodeId`),
    /// then graph-exec-created; writes the executable graph to `out_exec`. Node ids are
    /// what the fake's `cuptiGetGraphNodeId` gives for the nodes' handles.
    GRAPH_INSTANTIATE_CAPTURED, GraphInstantiateCapturedFn = "cupmonFakeGraphInstantiateCaptured":
        unsafe extern "C" fn(*mut u64) -> Status;
    /// `(mode)`: starts a stall ending on the action [`stall`] names (NONE ends one).
    /// Starting one first hands the client every buffer the fake holds.
    STALL, StallFn = "cupmonFakeStall": unsafe extern "C" fn(u32) -> Status;
    /// `(grid_x)`: kernels launched from now on have `grid_x` blocks (0: 128); NCCL
    /// picks its channels (the grid) by message size.
    SET_GRID_X, SetGridXFn = "cupmonFakeSetGridX": unsafe extern "C" fn(u32);
    /// `(domain, cbid, ms)`: one synchronising call (`cudaStreamSynchronize`: 2, 131)
    /// that blocks `ms` ms between its enter and exit callbacks.
    BLOCKING_CALL, BlockingCallFn = "cupmonFakeBlockingCall":
        unsafe extern "C" fn(u32, u32, u64) -> Status;
}
