//! Making records the way CUPTI does for one API call and the GPU work it causes,
//! and appending them to the client's buffers.

use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::MutexGuard;

use cupmon_records::ActivityKind;
use cupmon_records::{
    encoded_size, ApiDomain, ApiRecord, ExternalCorrelationRecord, KernelRecord, MemcpyRecord,
    MemsetRecord, Record,
};

use crate::cupti_types::{
    CallbackData, DOMAIN_DRIVER_API, DOMAIN_RUNTIME_API, SITE_ENTER, SITE_EXIT,
};
use crate::memory::MemoryCall;
use crate::state::{fake, lock, Buffers, Config, Counters, HeldRecord, LentBuffer};
use crate::{clock, layout, subscriber};

/// External correlation kinds CUPTI accepts (UNKNOWN .. CUSTOM2).
pub(crate) const EXTERNAL_KINDS: std::ops::RangeInclusive<u32> = 1..=5;

thread_local! {
    /// Pushed external correlation ids per kind, per thread (as in CUPTI).
    pub(crate) static EXTERNAL_IDS: RefCell<[Vec<u64>; 6]> = RefCell::default();
}

fn next_correlation_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The GPU work a call causes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Work {
    None,
    Kernel {
        stream_id: u32,
        name_ptr: u64,
    },
    /// A graph launch: `kernels` kernels under the launch's correlation id (of
    /// executable graph `exec`, whose captured nodes give the kernels their node ids).
    Graph {
        stream_id: u32,
        name_ptr: u64,
        kernels: u32,
        exec: u64,
    },
    Memcpy {
        stream_id: u32,
        bytes: u64,
        copy_kind: u8,
    },
    Memset {
        stream_id: u32,
        bytes: u64,
        value: u32,
    },
    /// An allocation, a free or a pool operation (MEMORY2/MEMORY_POOL records).
    Memory(MemoryCall),
}

/// One API call `cbid` of `domain` and its GPU work, `count` times: the
/// external-correlation and API records if the call is traced, then the GPU record
/// if its kind is enabled.
pub(crate) fn calls(domain: ApiDomain, cbid: u32, work: Work, count: u32) {
    calls_with(domain, cbid, work, count, std::ptr::null(), 0);
}

/// `count` launch calls `cbid` made into a stream being captured: each issues the
/// graph-node-created callback inside the call and makes no GPU record.
pub(crate) fn captured_calls(cbid: u32, count: u32) {
    let with_callbacks = subscriber::wanted(DOMAIN_RUNTIME_API, cbid);
    for _ in 0..count {
        let mut returned = 0i32;
        let mut data = CallbackData {
            callback_site: SITE_ENTER,
            function_name: std::ptr::null(),
            function_params: std::ptr::null(),
            function_return_value: (&mut returned as *mut i32).cast(),
            symbol_name: std::ptr::null(),
            context: std::ptr::null_mut(),
            context_uid: 1,
            correlation_data: std::ptr::null_mut(),
            correlation_id: next_correlation_id(),
        };
        if with_callbacks {
            subscriber::issue(
                DOMAIN_RUNTIME_API,
                cbid,
                (&data as *const CallbackData).cast(),
            );
        }
        crate::graphs::kernel_node_captured();
        if with_callbacks {
            data.callback_site = SITE_EXIT;
            subscriber::issue(
                DOMAIN_RUNTIME_API,
                cbid,
                (&data as *const CallbackData).cast(),
            );
        }
    }
}

/// [`calls`], with the call's parameters as the callbacks show them and the result it
/// returns: a call that fails (`result` not 0) makes no records.
pub(crate) fn calls_with(
    domain: ApiDomain,
    cbid: u32,
    work: Work,
    count: u32,
    params: *const std::ffi::c_void,
    result: i32,
) {
    let fake = fake();
    let callback_domain = match domain {
        ApiDomain::Runtime => DOMAIN_RUNTIME_API,
        ApiDomain::Driver => DOMAIN_DRIVER_API,
    };
    let with_callbacks = subscriber::wanted(callback_domain, cbid);
    // A launch's callbacks name its kernel (CUPTI's `symbolName`) and, for
    // `cudaLaunchKernel`, show its stream in the parameters (a handle per stream id,
    // at the offset of `cudaLaunchKernel_params.stream`).
    let (symbol, stream) = match work {
        Work::Kernel {
            stream_id,
            name_ptr,
        }
        | Work::Graph {
            stream_id,
            name_ptr,
            ..
        } => (name_ptr as *const std::ffi::c_char, Some(stream_id)),
        _ => (std::ptr::null(), None),
    };
    let mut launch_params = [0u64; 7];
    let params = match stream {
        Some(stream_id)
            if params.is_null() && cbid == cupmon_fake_cupti_abi::cbid::RUNTIME_LAUNCH_KERNEL =>
        {
            launch_params[6] = stream_handle(stream_id);
            launch_params.as_ptr().cast()
        }
        _ => params,
    };
    for _ in 0..count {
        let correlation_id = next_correlation_id();
        let mut returned = result;
        let mut data = CallbackData {
            callback_site: SITE_ENTER,
            function_name: std::ptr::null(),
            function_params: params,
            function_return_value: (&mut returned as *mut i32).cast(),
            symbol_name: symbol,
            context: std::ptr::null_mut(),
            context_uid: 1,
            correlation_data: std::ptr::null_mut(),
            correlation_id,
        };
        if with_callbacks {
            subscriber::issue(callback_domain, cbid, (&data as *const CallbackData).cast());
        }
        if result == 0 {
            let _emit = lock(&fake.emit);
            let records = {
                let config = lock(&fake.config);
                call_records(&config, domain, cbid, work, correlation_id)
            };
            for record in records {
                append(record);
            }
        }
        if with_callbacks {
            data.callback_site = SITE_EXIT;
            subscriber::issue(callback_domain, cbid, (&data as *const CallbackData).cast());
        }
    }
}

/// The `cudaStream_t` the fake's launches on `stream_id` pass.
pub(crate) fn stream_handle(stream_id: u32) -> u64 {
    0x5eed_0000_0000 + u64::from(stream_id)
}

/// One synchronising call `cbid` of `domain` that blocks for `ms` milliseconds
/// between its enter and exit callbacks (a host thread waiting on the GPU).
pub(crate) fn blocking_call(domain: u32, cbid: u32, ms: u64) {
    let mut returned = 0i32;
    let mut data = CallbackData {
        callback_site: SITE_ENTER,
        function_name: std::ptr::null(),
        function_params: std::ptr::null(),
        function_return_value: (&mut returned as *mut i32).cast(),
        symbol_name: std::ptr::null(),
        context: std::ptr::null_mut(),
        context_uid: 1,
        correlation_data: std::ptr::null_mut(),
        correlation_id: next_correlation_id(),
    };
    let wanted = subscriber::wanted(domain, cbid);
    if wanted {
        subscriber::issue(domain, cbid, (&data as *const CallbackData).cast());
    }
    std::thread::sleep(std::time::Duration::from_millis(ms));
    if wanted {
        data.callback_site = SITE_EXIT;
        subscriber::issue(domain, cbid, (&data as *const CallbackData).cast());
    }
}

fn call_records(
    config: &Config,
    domain: ApiDomain,
    cbid: u32,
    work: Work,
    correlation_id: u32,
) -> Vec<HeldRecord> {
    let start = clock::now();
    let mut records = Vec::new();
    let traced = match domain {
        ApiDomain::Runtime => config.runtime.allows(cbid),
        ApiDomain::Driver => config.driver.allows(cbid),
    };
    if traced {
        if config.is_enabled(ActivityKind::EXTERNAL_CORRELATION.0) {
            EXTERNAL_IDS.with_borrow(|stacks| {
                for kind in EXTERNAL_KINDS {
                    if let Some(&external_id) = stacks[kind as usize].last() {
                        let record = ExternalCorrelationRecord {
                            kind: ActivityKind::EXTERNAL_CORRELATION,
                            external_kind: kind,
                            external_id,
                            correlation_id,
                        };
                        records.push(held(Record::ExternalCorrelation(record)));
                    }
                }
            });
        }
        let api = ApiRecord {
            kind: domain.kind(),
            cbid,
            start,
            end: start + 4_000,
            process_id: std::process::id(),
            thread_id: clock::thread_id(config.thread_id_type),
            correlation_id,
            return_value: 0,
        };
        records.push(held(Record::Api(api)));
    }
    let (gpu_start, gpu_end) = (start + 2_000, start + 12_000);
    match work {
        Work::None => {}
        Work::Graph {
            stream_id,
            name_ptr,
            kernels,
            exec,
        } => {
            let nodes = crate::graphs::node_ids_of(exec);
            for k in 0..kernels as usize {
                let record = kernel_record(
                    config,
                    stream_id,
                    name_ptr,
                    correlation_id,
                    gpu_start,
                    gpu_end,
                );
                records.extend(record.map(|mut held| {
                    if let (Record::Kernel(kernel), Some(&id)) = (&mut held.record, nodes.get(k)) {
                        kernel.graph_node_id = id;
                    }
                    held
                }));
            }
        }
        Work::Kernel {
            stream_id,
            name_ptr,
        } => {
            records.extend(kernel_record(
                config,
                stream_id,
                name_ptr,
                correlation_id,
                gpu_start,
                gpu_end,
            ));
        }
        Work::Memcpy {
            stream_id,
            bytes,
            copy_kind,
        } => {
            if config.is_enabled(ActivityKind::MEMCPY.0) {
                // Memory kinds: 2 = pinned host, 3 = device.
                let (src_kind, dst_kind) = match copy_kind {
                    1 => (2, 3),
                    2 => (3, 2),
                    _ => (3, 3),
                };
                let memcpy = MemcpyRecord {
                    kind: ActivityKind::MEMCPY,
                    copy_kind,
                    src_kind,
                    dst_kind,
                    flags: 1,
                    bytes,
                    start: gpu_start,
                    end: gpu_end,
                    context_id: 1,
                    stream_id,
                    correlation_id,
                    ..MemcpyRecord::default()
                };
                records.push(held(Record::Memcpy(memcpy)));
            }
        }
        Work::Memset {
            stream_id,
            bytes,
            value,
        } => {
            if config.is_enabled(ActivityKind::MEMSET.0) {
                let memset = MemsetRecord {
                    kind: ActivityKind::MEMSET,
                    value,
                    bytes,
                    start: gpu_start,
                    end: gpu_end,
                    context_id: 1,
                    stream_id,
                    correlation_id,
                    memory_kind: 3,
                    ..MemsetRecord::default()
                };
                records.push(held(Record::Memset(memset)));
            }
        }
        Work::Memory(call) => {
            let enabled = |kind: ActivityKind| config.is_enabled(kind.0);
            // Inside the call, as CUPTI stamps them.
            let timestamp = start + 1_000;
            let record = lock(&fake().memory).apply(call, enabled, correlation_id, timestamp);
            records.extend(record.map(held));
        }
    }
    records
}

fn held(record: Record) -> HeldRecord {
    HeldRecord {
        record,
        pending: false,
    }
}

/// Appends one record to the open buffer, asking the client for a new buffer
/// when it does not fit; without one the record is dropped and counted. Called
/// with the `emit` lock held (and no other).
fn append(record: HeldRecord) {
    let fake = fake();
    if lock(&fake.config).stall != 0 {
        // The stall seen on the H200: CUPTI neither records nor counts as dropped.
        Counters::bump(&fake.counters.records_lost_in_stall);
        return;
    }
    let size = encoded_size(&record.record, layout());
    let Some(mut buffers) = make_room(size) else {
        lock(&fake.buffers).dropped += 1;
        Counters::bump(&fake.counters.records_dropped);
        return;
    };
    let open = buffers
        .open
        .as_mut()
        .expect("make_room holds the lock over the buffer it made room in");
    open.used += size;
    open.records.push(record);
    Counters::bump(&fake.counters.records_emitted);
}

/// Ensures the open buffer has `size` free bytes: retires a full one to the
/// delivery queue and requests the next from the client. Returns the buffers' lock,
/// held since the room was found or the new buffer put in place: a flush on another
/// thread (delivery.rs) takes the open buffer under that lock, and once took it
/// between this making room and the record's append (`make_room left an open buffer`,
/// an abort of the traced process: twice in at most 20 graph-replay bench runs).
fn make_room(size: usize) -> Option<MutexGuard<'static, Buffers>> {
    let fake = fake();
    {
        let mut buffers = lock(&fake.buffers);
        if buffers
            .open
            .as_ref()
            .is_some_and(|open| open.used + size <= open.size)
        {
            return Some(buffers);
        }
        if let Some(full) = buffers.open.take() {
            buffers.full.push_back(full);
            fake.buffers_changed.notify_all();
        }
    }
    let callbacks = lock(&fake.config).callbacks?;
    Counters::bump(&fake.counters.buffers_requested);
    let (mut ptr, mut lent_size, mut max_records) = (std::ptr::null_mut::<u8>(), 0usize, 0usize);
    // SAFETY: the client's request callback, called as CUPTI calls it, with valid
    // out-pointers and no lock held but `emit`.
    unsafe { (callbacks.request)(&mut ptr, &mut lent_size, &mut max_records) };
    if ptr.is_null() || lent_size == 0 {
        Counters::bump(&fake.counters.buffers_refused);
        return None;
    }
    let lent = LentBuffer {
        ptr: ptr as usize,
        size: lent_size,
        used: 0,
        records: Vec::new(),
    };
    let mut buffers = lock(&fake.buffers);
    if lent.ptr % 8 != 0 || lent_size < size {
        // Unusable for this record: hand it back empty with the next delivery.
        buffers.full.push_back(lent);
        fake.buffers_changed.notify_all();
        return None;
    }
    buffers.open = Some(lent);
    Some(buffers)
}

/// A kernel's record as CUPTI makes it (if a kernel kind is enabled).
fn kernel_record(
    config: &Config,
    stream_id: u32,
    name_ptr: u64,
    correlation_id: u32,
    gpu_start: u64,
    gpu_end: u64,
) -> Option<HeldRecord> {
    let concurrent = config.is_enabled(ActivityKind::CONCURRENT_KERNEL.0);
    if !(concurrent || config.is_enabled(ActivityKind::KERNEL.0)) {
        return None;
    }
    static GRID_ID: AtomicI64 = AtomicI64::new(1);
    let pending = config.kernels_pending;
    let end = if pending { 0 } else { gpu_end };
    let kernel = KernelRecord {
        kind: if concurrent {
            ActivityKind::CONCURRENT_KERNEL
        } else {
            ActivityKind::KERNEL
        },
        start: gpu_start,
        end,
        completed: end,
        context_id: 1,
        stream_id,
        grid_x: if config.kernel_grid_x > 0 {
            config.kernel_grid_x as i32
        } else {
            128
        },
        grid_y: 1,
        grid_z: 1,
        block_x: 256,
        block_y: 1,
        block_z: 1,
        registers_per_thread: 32,
        correlation_id,
        grid_id: GRID_ID.fetch_add(1, Ordering::Relaxed),
        name_ptr,
        ..KernelRecord::default()
    };
    Some(HeldRecord {
        record: Record::Kernel(kernel),
        pending,
    })
}
