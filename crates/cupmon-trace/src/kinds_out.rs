//! How the kinds PyTorch's merge does not know (memory, memory pools) show in a
//! complete trace: an instant per operation and a counter track per device or
//! pool. A kind added to the window shows here (an arm of [`write_kind`]); the
//! merge hands every such event to it.

use std::collections::HashMap;

use cupmon_window::{MemoryEvent, MemoryPoolEvent, WindowEvent};

use crate::out::{Arg, TraceOut};

/// What the kinds' events carry from one to the next (memory held per device).
#[derive(Debug, Default)]
pub(crate) struct KindTotals {
    memory: MemoryTotals,
}

/// Write event `e` of a kind PyTorch's merge does not know into `out`; `out`
/// discarding (an event left out) still counts it in `totals`.
pub(crate) fn write_kind(e: &WindowEvent, out: &mut dyn TraceOut, totals: &mut KindTotals) {
    match e {
        WindowEvent::Memory(m) => write_memory(m, out, &mut totals.memory),
        WindowEvent::MemoryPool(p) => write_memory_pool(p, out),
        _ => {}
    }
}

/// Bytes held per device, for the counter track; frees are matched to their
/// allocation by address when CUPTI reports them without a size.
#[derive(Debug, Default)]
struct MemoryTotals {
    live: HashMap<(u32, u64), u64>,
    held: HashMap<u32, i128>,
}

/// The `[memory]` instant and the device's counter after it.
fn write_memory(e: &MemoryEvent, out: &mut dyn TraceOut, totals: &mut MemoryTotals) {
    let key = (e.device_id, e.address);
    let bytes = if e.is_allocation() {
        totals.live.insert(key, e.bytes);
        i128::from(e.bytes)
    } else {
        let size = totals.live.remove(&key).unwrap_or(e.bytes);
        -i128::from(if e.bytes > 0 { e.bytes } else { size })
    };
    let held = totals.held.entry(e.device_id).or_insert(0);
    *held += bytes;
    let (pid, tid) = (i128::from(e.device_id), i128::from(e.stream_id));
    let ts = i128::from(e.timestamp_ns);
    out.instant(
        pid,
        tid,
        ts,
        "[memory]",
        "gpu_memory",
        &[
            ("Device Type", Arg::Int(1)),
            ("Device Id", Arg::Int(pid)),
            ("Addr", Arg::Int(i128::from(e.address))),
            ("Bytes", Arg::Int(bytes)),
            ("Total Reserved", Arg::Int(*held)),
            ("Memory Kind", Arg::Int(i128::from(e.memory_kind))),
            ("Async", Arg::Int(i128::from(e.is_async))),
            ("correlation", Arg::Int(i128::from(e.correlation_id))),
        ],
    );
    out.counter(
        pid,
        ts,
        "GPU memory (driver allocations)",
        &[("bytes", *held as f64)],
    );
}

/// The operation's instant (on the device's first track) and the pool-size counter.
fn write_memory_pool(e: &MemoryPoolEvent, out: &mut dyn TraceOut) {
    let pid = i128::from(e.device_id);
    let ts = i128::from(e.timestamp_ns);
    let as_int = |v: u64| Arg::Int(i128::from(v));
    out.instant(
        pid,
        0,
        ts,
        &e.name,
        "gpu_memory_pool",
        &[
            ("Pool Addr", as_int(e.address)),
            ("Pool Size", as_int(e.size)),
            ("Utilized Size", as_int(e.utilized_size)),
            ("Release Threshold", as_int(e.release_threshold)),
            ("Min Bytes To Keep", as_int(e.min_bytes_to_keep)),
            ("Pool Type", as_int(e.pool_type.into())),
            ("Managed", Arg::Int(i128::from(e.is_managed_pool))),
        ],
    );
    let size = if e.operation == 2 { 0 } else { e.size };
    out.counter(
        pid,
        ts,
        &format!("memory pool 0x{:x}", e.address),
        &[("bytes", size as f64)],
    );
}
