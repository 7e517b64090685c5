//! [`FakeControls`]: the fake's `cupmonFake*` functions, resolved from the
//! loaded library and wrapped in safe methods. Names and types come from
//! `cupmon-fake-cupti-abi`, which the fake checks its definitions against.

use std::ffi::CString;
use std::path::PathBuf;
use std::time::Duration;

use cupmon_cupti::{Cupti, CuptiError};
use cupmon_fake_cupti_abi::{self as abi, mem_pool, FakeStats};

/// A `cupmonFake*` control function that the loaded library does not export
/// (so it is not cupmon's fake libcupti, or an older build of it).
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "{path} does not export {symbol}: it is not cupmon's fake libcupti (or an old build of it)"
)]
pub struct NotFakeError {
    pub path: PathBuf,
    pub symbol: &'static str,
}

/// The fake's control functions, resolved from the loaded library.
#[derive(Debug, Clone, Copy)]
pub struct FakeControls {
    launch_kernels: abi::LaunchKernelsFn,
    memcpy: abi::MemcpyFn,
    memset: abi::MemsetFn,
    runtime_call: abi::RuntimeCallFn,
    driver_call: abi::DriverCallFn,
    malloc: abi::MallocFn,
    free: abi::FreeFn,
    mem_pool: abi::MemPoolFn,
    set_completion_delay_us: abi::SetCompletionDelayUsFn,
    set_flush_delay_us: abi::SetFlushDelayUsFn,
    set_kernels_pending: abi::SetKernelsPendingFn,
    finish_kernels: abi::FinishKernelsFn,
    deliver_foreign_buffer: abi::DeliverForeignBufferFn,
    stats: abi::StatsFn,
    reset: abi::ResetFn,
    launch_kernels_via: abi::LaunchKernelsViaFn,
    graph_instantiate: abi::GraphInstantiateFn,
    graph_launch: abi::GraphLaunchFn,
    graph_destroy: abi::GraphDestroyFn,
    stall: abi::StallFn,
    capture_kernels: abi::CaptureKernelsFn,
    cupti: &'static Cupti,
}

impl FakeControls {
    /// The controls of `cupti`, if that library is cupmon's fake libcupti.
    pub fn resolve(cupti: &'static Cupti) -> Result<Self, NotFakeError> {
        macro_rules! control {
            ($name:expr) => {
                // SAFETY: the fake exports each control with the type
                // cupmon-fake-cupti-abi declares for its name (the fake checks
                // its definitions against those types when it compiles); the
                // library is never unloaded.
                unsafe { cupti.raw_symbol($name) }.ok_or_else(|| NotFakeError {
                    path: cupti.path().to_path_buf(),
                    symbol: $name,
                })?
            };
        }
        Ok(FakeControls {
            launch_kernels: control!(abi::LAUNCH_KERNELS),
            memcpy: control!(abi::MEMCPY),
            memset: control!(abi::MEMSET),
            runtime_call: control!(abi::RUNTIME_CALL),
            driver_call: control!(abi::DRIVER_CALL),
            malloc: control!(abi::MALLOC),
            free: control!(abi::FREE),
            mem_pool: control!(abi::MEM_POOL),
            set_completion_delay_us: control!(abi::SET_COMPLETION_DELAY_US),
            set_flush_delay_us: control!(abi::SET_FLUSH_DELAY_US),
            set_kernels_pending: control!(abi::SET_KERNELS_PENDING),
            finish_kernels: control!(abi::FINISH_KERNELS),
            deliver_foreign_buffer: control!(abi::DELIVER_FOREIGN_BUFFER),
            stats: control!(abi::STATS),
            reset: control!(abi::RESET),
            launch_kernels_via: control!(abi::LAUNCH_KERNELS_VIA),
            graph_instantiate: control!(abi::GRAPH_INSTANTIATE),
            graph_launch: control!(abi::GRAPH_LAUNCH),
            graph_destroy: control!(abi::GRAPH_DESTROY),
            stall: control!(abi::STALL),
            capture_kernels: control!(abi::CAPTURE_KERNELS),
            cupti,
        })
    }

    /// `count` launches of kernel `name` on `stream_id`: each a RUNTIME
    /// `cudaLaunchKernel` record (preceded by external-correlation records for the
    /// ids pushed on this thread) and a CONCURRENT_KERNEL (or KERNEL) record, as far
    /// as those kinds are enabled. The name is interned by the fake: every launch of
    /// one name carries the same pointer, as with CUPTI.
    pub fn launch_kernels(&self, count: u32, stream_id: u32, name: &str) -> Result<(), CuptiError> {
        let name = CString::new(name).expect("kernel name without NUL bytes");
        // SAFETY: `name` is a valid NUL-terminated string for the duration of the
        // call; the fake copies it.
        let status = unsafe { (self.launch_kernels)(count, stream_id, name.as_ptr()) };
        self.cupti.check(status, abi::LAUNCH_KERNELS, None)
    }

    /// `count` launches of kernel `name` through API call `cbid` of `domain` (1:
    /// driver, 2: runtime), each returning `result` (not 0: the launch fails and makes
    /// no records).
    pub fn launch_kernels_via(
        &self,
        domain: u32,
        cbid: u32,
        count: u32,
        stream_id: u32,
        name: &str,
        result: i32,
    ) -> Result<(), CuptiError> {
        let name = CString::new(name).expect("kernel name without NUL bytes");
        // SAFETY: `name` is a valid NUL-terminated string for the call; the fake copies it.
        let status = unsafe {
            (self.launch_kernels_via)(domain, cbid, count, stream_id, name.as_ptr(), result)
        };
        self.cupti
            .check(status, abi::LAUNCH_KERNELS_VIA, Some(cbid.to_string()))
    }

    /// Instantiates a graph of `kernel_nodes` kernel nodes and an empty node, with a
    /// child graph of `child_kernel_nodes` kernel nodes when non-zero and a
    /// conditional node (one kernel per launch) when `conditional`: issues the
    /// graph-exec-created callback and returns the executable graph.
    pub fn graph_instantiate(
        &self,
        kernel_nodes: u32,
        child_kernel_nodes: u32,
        conditional: bool,
    ) -> Result<u64, CuptiError> {
        let mut exec = 0u64;
        // SAFETY: a valid out-pointer for the call.
        let status = unsafe {
            (self.graph_instantiate)(
                kernel_nodes,
                child_kernel_nodes,
                u32::from(conditional),
                &mut exec,
            )
        };
        self.cupti.check(status, abi::GRAPH_INSTANTIATE, None)?;
        Ok(exec)
    }

    /// `count` `cudaGraphLaunch` calls of `exec`: each runs the graph's kernels (named
    /// `name`) under the launch's correlation id.
    pub fn graph_launch(
        &self,
        exec: u64,
        count: u32,
        stream_id: u32,
        name: &str,
    ) -> Result<(), CuptiError> {
        let name = CString::new(name).expect("kernel name without NUL bytes");
        // SAFETY: `name` is a valid NUL-terminated string for the call; the fake copies it.
        let status = unsafe { (self.graph_launch)(exec, count, stream_id, name.as_ptr()) };
        self.cupti
            .check(status, abi::GRAPH_LAUNCH, Some(format!("{exec:#x}")))
    }

    /// `count` kernel launches made while `stream_id` is captured into a graph: each
    /// adds a kernel node (graph-node-created callback inside the call), none runs.
    pub fn capture_kernels(&self, count: u32, stream_id: u32) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.capture_kernels)(count, stream_id) };
        self.cupti.check(status, abi::CAPTURE_KERNELS, None)
    }

    /// Destroys an executable graph (the graph-exec-destroy callback first).
    pub fn graph_destroy(&self, exec: u64) -> Result<(), CuptiError> {
        // SAFETY: plain value.
        let status = unsafe { (self.graph_destroy)(exec) };
        self.cupti
            .check(status, abi::GRAPH_DESTROY, Some(format!("{exec:#x}")))
    }

    /// Starts a stall that the action `mode` names ([`abi::stall`]) ends: the fake
    /// hands back every buffer it holds, then asks for none, delivers nothing and loses
    /// every record without counting it as dropped. `stall::NONE` ends a stall.
    pub fn stall(&self, mode: u32) -> Result<(), CuptiError> {
        // SAFETY: plain value.
        let status = unsafe { (self.stall)(mode) };
        self.cupti.check(status, abi::STALL, Some(mode.to_string()))
    }

    /// `count` `cudaMemcpyAsync` calls of `bytes` each (`copy_kind`: CUPTI's
    /// `CUpti_ActivityMemcpyKind`, 1 = HtoD).
    pub fn memcpy(
        &self,
        count: u32,
        bytes: u64,
        copy_kind: u32,
        stream_id: u32,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.memcpy)(count, bytes, copy_kind, stream_id) };
        self.cupti.check(status, abi::MEMCPY, None)
    }

    /// `count` `cudaMemsetAsync` calls of `bytes` each, setting `value`.
    pub fn memset(
        &self,
        count: u32,
        bytes: u64,
        value: u32,
        stream_id: u32,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.memset)(count, bytes, value, stream_id) };
        self.cupti.check(status, abi::MEMSET, None)
    }

    /// One runtime API call with callback id `cbid` (a RUNTIME record if enabled for it).
    pub fn runtime_call(&self, cbid: u32) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.runtime_call)(cbid) };
        self.cupti
            .check(status, abi::RUNTIME_CALL, Some(cbid.to_string()))
    }

    /// One driver API call with callback id `cbid` (a DRIVER record if enabled for it).
    pub fn driver_call(&self, cbid: u32) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.driver_call)(cbid) };
        self.cupti
            .check(status, abi::DRIVER_CALL, Some(cbid.to_string()))
    }

    /// One `cudaMalloc` of `bytes` on `device` returning `address`
    /// (`cudaMallocAsync` on `stream_id`, from the device's default pool at
    /// [`abi::default_pool_address`], when `is_async`): a RUNTIME record and a
    /// MEMORY2 allocation record, as far as those kinds are enabled. A zero
    /// size or address, or an address live on the device, is an error.
    pub fn malloc(
        &self,
        device: u32,
        bytes: u64,
        address: u64,
        is_async: bool,
        stream_id: u32,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status =
            unsafe { (self.malloc)(device, bytes, address, u32::from(is_async), stream_id) };
        self.cupti
            .check(status, abi::MALLOC, Some(format!("{address:#x}")))
    }

    /// One `cudaFree` (`cudaFreeAsync` when `is_async`) of an allocation made
    /// by [`FakeControls::malloc`]: a RUNTIME record and a MEMORY2 release
    /// record with the allocation's size. An address not live is an error.
    pub fn free(
        &self,
        device: u32,
        address: u64,
        is_async: bool,
        stream_id: u32,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status = unsafe { (self.free)(device, address, u32::from(is_async), stream_id) };
        self.cupti
            .check(status, abi::FREE, Some(format!("{address:#x}")))
    }

    /// One `cudaMemPoolCreate` of a pool of `size` bytes at `address` on
    /// `device`: a RUNTIME record and a MEMORY_POOL record.
    pub fn mem_pool_create(&self, device: u32, address: u64, size: u64) -> Result<(), CuptiError> {
        self.mem_pool(mem_pool::CREATED, device, address, size, 0)
    }

    /// One `cudaMemPoolTrimTo(pool, min_bytes_to_keep)`; `size` is what the
    /// pool holds after it.
    pub fn mem_pool_trim(
        &self,
        device: u32,
        address: u64,
        size: u64,
        min_bytes_to_keep: u64,
    ) -> Result<(), CuptiError> {
        self.mem_pool(mem_pool::TRIMMED, device, address, size, min_bytes_to_keep)
    }

    /// One `cudaMemPoolDestroy`.
    pub fn mem_pool_destroy(&self, device: u32, address: u64, size: u64) -> Result<(), CuptiError> {
        self.mem_pool(mem_pool::DESTROYED, device, address, size, 0)
    }

    /// `cupmonFakeMemPool` with any `operation` (see [`mem_pool`]; others are
    /// an error).
    pub fn mem_pool(
        &self,
        operation: u32,
        device: u32,
        address: u64,
        size: u64,
        min_bytes_to_keep: u64,
    ) -> Result<(), CuptiError> {
        // SAFETY: plain values.
        let status =
            unsafe { (self.mem_pool)(operation, device, address, size, min_bytes_to_keep) };
        self.cupti
            .check(status, abi::MEM_POOL, Some(operation.to_string()))
    }

    /// Makes the fake's delivery thread wait this long before each full buffer it
    /// completes: buffers pile up with the client, as with a slow CUPTI thread or
    /// consumer. Flushes are not delayed.
    pub fn set_completion_delay(&self, delay: Duration) {
        let micros = delay.as_micros().try_into().unwrap_or(u64::MAX);
        // SAFETY: plain value.
        unsafe { (self.set_completion_delay_us)(micros) }
    }

    /// Makes each plain `cuptiActivityFlushAll` wait this long before it delivers
    /// anything, as CUPTI's flush did under full-rate launches on the H200.
    pub fn set_flush_delay(&self, delay: Duration) {
        let micros = delay.as_micros().try_into().unwrap_or(u64::MAX);
        // SAFETY: plain value.
        unsafe { (self.set_flush_delay_us)(micros) }
    }

    /// While on, launched kernels stay unfinished: a plain flush holds back their
    /// buffers, a forced flush delivers them with `end = 0`, as CUPTI does.
    pub fn set_kernels_pending(&self, pending: bool) {
        // SAFETY: plain value.
        unsafe { (self.set_kernels_pending)(u32::from(pending)) }
    }

    /// Finishes every pending kernel (gives it an end time).
    pub fn finish_kernels(&self) -> Result<(), CuptiError> {
        // SAFETY: no arguments.
        let status = unsafe { (self.finish_kernels)() };
        self.cupti.check(status, abi::FINISH_KERNELS, None)
    }

    /// Passes a buffer the fake allocated itself to the registered completion
    /// callback (what another CUPTI client's buffers look like), then frees it.
    pub fn deliver_foreign_buffer(&self) -> Result<(), CuptiError> {
        // SAFETY: no arguments; the fake owns and frees the buffer.
        let status = unsafe { (self.deliver_foreign_buffer)() };
        self.cupti.check(status, abi::DELIVER_FOREIGN_BUFFER, None)
    }

    pub fn stats(&self) -> FakeStats {
        let mut stats = FakeStats::default();
        // SAFETY: the fake writes at most `size` bytes of this repr(C) struct.
        let status = unsafe { (self.stats)(&mut stats, size_of::<FakeStats>()) };
        assert_eq!(status, 0, "{} failed", abi::STATS);
        stats
    }

    /// Register `callback` as CUPTI's clock, as torch.profiler does
    /// (`cuptiActivityRegisterTimestampCallback`); `None` restores the default clock.
    /// Reset restores it too.
    pub fn set_timestamp_callback(&self, callback: Option<extern "C" fn() -> u64>) {
        type RegisterFn = unsafe extern "C" fn(Option<extern "C" fn() -> u64>) -> i32;
        // SAFETY: the fake exports this CUPTI entry point with this signature; the
        // library is never unloaded.
        let register: Option<RegisterFn> = unsafe {
            self.cupti
                .raw_symbol("cuptiActivityRegisterTimestampCallback")
        };
        let register = register.expect("the fake exports cuptiActivityRegisterTimestampCallback");
        // SAFETY: a plain call with a function pointer (or null) that lives for the
        // whole test process.
        let status = unsafe { register(callback) };
        assert_eq!(status, 0, "cuptiActivityRegisterTimestampCallback failed");
    }

    /// Force-flushes what the fake holds to the registered client, then clears
    /// enabled kinds, filters, thread-id type, dropped counts, delay, pending
    /// kernels, live allocations and statistics. The registered callbacks stay.
    pub fn reset(&self) {
        // SAFETY: no arguments.
        unsafe { (self.reset)() }
    }
}
