//! What each launching thread did last, for hang records: a small ring of its recent
//! launches (correlation id, API call, stream handle, kernel symbol, time) and the
//! synchronisation it is blocked in, if any.
//!
//! The launch path stays cheap: a thread claims a slot of [`SLOTS`] once (a
//! compare-exchange at its first launch) and from then on writes only its own slot,
//! with relaxed atomic stores and a coarse clock (a few ns through the vDSO). No lock,
//! no allocation, no line another launching thread writes. A reader (the hang record,
//! rare) copies the rings and drops entries that were overwritten while it read.
//! Threads past [`SLOTS`] at once are counted, not tracked.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::ids::{CallbackData, DOMAIN_DRIVER_API, DOMAIN_RUNTIME_API};

/// Threads tracked at once.
pub const SLOTS: usize = 64;
/// Launches kept per thread.
pub const RING: usize = 16;

/// Synchronising calls whose enter without exit means the thread is blocked on the
/// GPU (CUPTI 13.0 ids; the names are checked against cupmon-records' table).
pub const RUNTIME_SYNCS: [(u32, &str); 5] = [
    (31, "cudaMemcpy"),
    (126, "cudaThreadSynchronize"),
    (131, "cudaStreamSynchronize"),
    (137, "cudaEventSynchronize"),
    (165, "cudaDeviceSynchronize"),
];
pub const DRIVER_SYNCS: [(u32, &str); 3] = [
    (17, "cuCtxSynchronize"),
    (121, "cuEventSynchronize"),
    (126, "cuStreamSynchronize"),
];

/// Whether `(domain, cbid)` is a synchronisation cupmon follows.
#[inline]
pub fn is_sync(domain: u32, cbid: u32) -> bool {
    matches!(
        (domain, cbid),
        (DOMAIN_RUNTIME_API, 31 | 126 | 131 | 137 | 165) | (DOMAIN_DRIVER_API, 17 | 121 | 126)
    )
}

/// The `(domain, cbid)` pairs of [`is_sync`].
pub fn sync_callbacks() -> impl Iterator<Item = (u32, u32)> {
    RUNTIME_SYNCS
        .iter()
        .map(|&(id, _)| (DOMAIN_RUNTIME_API, id))
        .chain(DRIVER_SYNCS.iter().map(|&(id, _)| (DOMAIN_DRIVER_API, id)))
}

#[derive(Debug)]
struct Entry {
    correlation_id: AtomicU32,
    /// `domain << 16 | cbid`.
    call: AtomicU32,
    unix_ns: AtomicU64,
    stream_handle: AtomicU64,
    symbol: AtomicU64,
}

#[repr(align(128))]
#[derive(Debug)]
struct Slot {
    /// The owning thread's kernel tid; 0: free.
    owner: AtomicU64,
    /// Launches written so far (the ring's next index is `head % RING`).
    head: AtomicU64,
    /// The last launch made from this slot (kept when its thread ends), so that the
    /// last launch of the process is read without a line every thread writes.
    last_ns: AtomicU64,
    /// The synchronisation in progress (`domain << 16 | cbid`, 0: none) and since when.
    sync_call: AtomicU32,
    sync_since_ns: AtomicU64,
    /// The last synchronisation that returned, and when it returned.
    last_sync_call: AtomicU32,
    last_sync_ns: AtomicU64,
    ring: [Entry; RING],
}

impl Slot {
    const fn new() -> Self {
        Self {
            owner: AtomicU64::new(0),
            head: AtomicU64::new(0),
            last_ns: AtomicU64::new(0),
            sync_call: AtomicU32::new(0),
            sync_since_ns: AtomicU64::new(0),
            last_sync_call: AtomicU32::new(0),
            last_sync_ns: AtomicU64::new(0),
            ring: [const {
                Entry {
                    correlation_id: AtomicU32::new(0),
                    call: AtomicU32::new(0),
                    unix_ns: AtomicU64::new(0),
                    stream_handle: AtomicU64::new(0),
                    symbol: AtomicU64::new(0),
                }
            }; RING],
        }
    }
}

static TABLE: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];
/// Threads that found no free slot.
static UNTRACKED: AtomicU64 = AtomicU64::new(0);

/// Frees the thread's slot when the thread ends.
struct Claim(Cell<usize>);

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(slot) = TABLE.get(self.0.get()) {
            slot.sync_call.store(0, Ordering::Relaxed);
            slot.owner.store(0, Ordering::Release);
        }
    }
}

/// `usize::MAX`: not claimed yet; `SLOTS`: none was free.
const UNCLAIMED: usize = usize::MAX;

thread_local! {
    static MINE: Claim = const { Claim(Cell::new(UNCLAIMED)) };
}

fn my_slot() -> Option<&'static Slot> {
    MINE.try_with(|claim| {
        let mut index = claim.0.get();
        if index == UNCLAIMED {
            index = claim_slot();
            claim.0.set(index);
        }
        TABLE.get(index)
    })
    .ok()
    .flatten()
}

fn claim_slot() -> usize {
    // SAFETY: gettid(2) has no arguments and cannot fail.
    let tid = unsafe { libc::gettid() }.max(1) as u64;
    for (i, slot) in TABLE.iter().enumerate() {
        if slot
            .owner
            .compare_exchange(0, tid, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            slot.head.store(0, Ordering::Relaxed);
            slot.last_sync_call.store(0, Ordering::Relaxed);
            slot.last_sync_ns.store(0, Ordering::Relaxed);
            return i;
        }
    }
    UNTRACKED.fetch_add(1, Ordering::Relaxed);
    SLOTS
}

/// Unix time in ns from the coarse clock (resolution of a few ms; enough for hangs).
#[inline]
pub fn coarse_unix_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill; CLOCK_REALTIME_COARSE exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// The stream handle a launch call's parameters name, for the calls whose parameter
/// layouts cupmon knows (CUPTI's `*_params` structs of CUDA 13.0); 0 otherwise.
///
/// # Safety
/// `data` must be CUPTI's callback data for launch call `(domain, cbid)`.
#[inline]
unsafe fn stream_handle(domain: u32, cbid: u32, data: &CallbackData) -> u64 {
    let params = data.function_params.cast::<u8>();
    if params.is_null() {
        return 0;
    }
    // SAFETY (all reads below): CUPTI's parameter struct for this call id, read at the
    // offset its header gives the stream (or the launch configuration holding it).
    unsafe {
        match (domain, cbid) {
            // cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream)
            (DOMAIN_RUNTIME_API, 211 | 214) => params.add(48).cast::<u64>().read_unaligned(),
            // cuLaunchKernel(f, 7 unsigned ints, hStream, ...)
            (DOMAIN_DRIVER_API, 307 | 442) => params.add(40).cast::<u64>().read_unaligned(),
            // cudaLaunchKernelExC(config, ...) / cuLaunchKernelEx(config, ...): the
            // configuration's stream follows 7 (driver) or 6 ints and a size_t (runtime).
            (DOMAIN_RUNTIME_API, 430 | 431) | (DOMAIN_DRIVER_API, 652 | 653) => {
                let config = params.cast::<*const u8>().read_unaligned();
                if config.is_null() {
                    0
                } else {
                    config.add(32).cast::<u64>().read_unaligned()
                }
            }
            _ => 0,
        }
    }
}

/// A launch call of this thread returned successfully (called by cupmon's callback;
/// public for the benchmark `examples/launch_ring_cost.rs`).
///
/// # Safety
/// `data` must be CUPTI's callback data for launch call `(domain, cbid)`.
#[inline]
pub unsafe fn launched(domain: u32, cbid: u32, data: &CallbackData) {
    let Some(slot) = my_slot() else {
        return;
    };
    let now = coarse_unix_ns();
    slot.last_ns.store(now, Ordering::Relaxed);
    let head = slot.head.load(Ordering::Relaxed);
    let entry = &slot.ring[(head % RING as u64) as usize];
    entry
        .correlation_id
        .store(data.correlation_id, Ordering::Relaxed);
    entry.call.store(domain << 16 | cbid, Ordering::Relaxed);
    entry.unix_ns.store(now, Ordering::Relaxed);
    // SAFETY: the caller's contract.
    let stream = unsafe { stream_handle(domain, cbid, data) };
    entry.stream_handle.store(stream, Ordering::Relaxed);
    entry
        .symbol
        .store(data.symbol_name as u64, Ordering::Relaxed);
    slot.head.store(head + 1, Ordering::Release);
}

/// A synchronising call entered (`enter`) or left on this thread.
#[inline]
pub(crate) fn sync_call(domain: u32, cbid: u32, enter: bool) {
    let Some(slot) = my_slot() else {
        return;
    };
    let now = coarse_unix_ns();
    let call = domain << 16 | cbid;
    if enter {
        slot.sync_since_ns.store(now, Ordering::Relaxed);
        slot.sync_call.store(call, Ordering::Release);
    } else {
        slot.sync_call.store(0, Ordering::Relaxed);
        slot.last_sync_ns.store(now, Ordering::Relaxed);
        slot.last_sync_call.store(call, Ordering::Release);
    }
}

/// An API call as `(domain, cbid)` (1 driver, 2 runtime).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiCall {
    pub domain: u32,
    pub cbid: u32,
}

impl ApiCall {
    fn from_packed(call: u32) -> Option<Self> {
        (call != 0).then_some(Self {
            domain: call >> 16,
            cbid: call & 0xffff,
        })
    }
}

/// One launch a thread made, as its ring kept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchSeen {
    pub correlation_id: u32,
    pub call: ApiCall,
    /// Unix ns (coarse clock) when the launch call returned.
    pub unix_ns: u64,
    /// The stream handle (`CUstream`) the call named; 0 when unknown (the default
    /// stream, or a call whose parameters cupmon does not read).
    pub stream_handle: u64,
    /// CUPTI's `symbolName` pointer (the kernel's mangled name), valid while the
    /// kernel's module is loaded; 0 when CUPTI gave none.
    pub symbol: u64,
}

/// What one thread did last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSeen {
    pub tid: u64,
    /// Oldest first.
    pub launches: Vec<LaunchSeen>,
    /// Launches this thread made since it claimed its slot.
    pub launch_count: u64,
    /// The synchronisation it is in now, and since when (Unix ns).
    pub blocked_in: Option<(ApiCall, u64)>,
    /// Its last synchronisation that returned, and when.
    pub last_sync: Option<(ApiCall, u64)>,
}

/// Every tracked thread's state now, and how many threads could not be tracked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadsSeen {
    pub threads: Vec<ThreadSeen>,
    pub untracked_threads: u64,
    /// The last launch of any thread (Unix ns); 0: none yet.
    pub last_launch_ns: u64,
}

/// Copies every tracked thread's ring and state.
pub fn threads_seen() -> ThreadsSeen {
    let mut threads = Vec::new();
    for slot in &TABLE {
        let tid = slot.owner.load(Ordering::Acquire);
        if tid == 0 {
            continue;
        }
        let head = slot.head.load(Ordering::Acquire);
        let first = head.saturating_sub(RING as u64);
        let mut launches: Vec<LaunchSeen> = (first..head)
            .filter_map(|i| {
                let e = &slot.ring[(i % RING as u64) as usize];
                Some(LaunchSeen {
                    correlation_id: e.correlation_id.load(Ordering::Relaxed),
                    call: ApiCall::from_packed(e.call.load(Ordering::Relaxed))?,
                    unix_ns: e.unix_ns.load(Ordering::Relaxed),
                    stream_handle: e.stream_handle.load(Ordering::Relaxed),
                    symbol: e.symbol.load(Ordering::Relaxed),
                })
            })
            .collect();
        // Entries the thread overwrote while they were read are not trusted.
        let after = slot.head.load(Ordering::Acquire);
        let overwritten = (after.saturating_sub(RING as u64)).saturating_sub(first) as usize;
        launches.drain(..overwritten.min(launches.len()));
        let since = slot.sync_since_ns.load(Ordering::Relaxed);
        let blocked_in =
            ApiCall::from_packed(slot.sync_call.load(Ordering::Acquire)).map(|call| (call, since));
        let last_sync = ApiCall::from_packed(slot.last_sync_call.load(Ordering::Acquire))
            .map(|call| (call, slot.last_sync_ns.load(Ordering::Relaxed)));
        threads.push(ThreadSeen {
            tid,
            launches,
            launch_count: after,
            blocked_in,
            last_sync,
        });
    }
    ThreadsSeen {
        threads,
        untracked_threads: UNTRACKED.load(Ordering::Relaxed),
        last_launch_ns: last_launch_ns(),
    }
}

/// The kernel name behind a launch's [`LaunchSeen::symbol`], at most 4 KiB of it.
///
/// Meant for launches still in flight (launched, no activity record yet): their
/// kernel's module cannot have been unloaded (unloading a module waits for its
/// kernels), so the name CUPTI pointed at is still there. Zero gives `None`.
pub fn symbol_name(symbol: u64) -> Option<String> {
    if symbol == 0 {
        return None;
    }
    let p = symbol as *const u8;
    let mut bytes = Vec::new();
    for i in 0..4096 {
        // SAFETY: `symbol` is a `symbolName` CUPTI passed to a launch callback: a
        // NUL-terminated string of the loaded module (see above); read byte by byte up
        // to its NUL or 4 KiB.
        let b = unsafe { p.add(i).read() };
        if b == 0 {
            break;
        }
        bytes.push(b);
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The last launch of any thread (Unix ns, coarse clock); 0: none yet.
/// (Threads beyond the table's slots are not seen.)
pub fn last_launch_ns() -> u64 {
    TABLE
        .iter()
        .map(|s| s.last_ns.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cupmon_records::ApiDomain;

    fn data(correlation_id: u32) -> CallbackData {
        CallbackData {
            callback_site: 1,
            function_name: std::ptr::null(),
            function_params: std::ptr::null(),
            function_return_value: std::ptr::null_mut(),
            symbol_name: std::ptr::null(),
            context: std::ptr::null_mut(),
            context_uid: 0,
            correlation_data: std::ptr::null_mut(),
            correlation_id,
        }
    }

    fn mine(seen: &ThreadsSeen) -> ThreadSeen {
        // SAFETY: gettid(2) cannot fail.
        let tid = unsafe { libc::gettid() } as u64;
        seen.threads.iter().find(|t| t.tid == tid).unwrap().clone()
    }

    #[test]
    fn the_sync_ids_are_cuptis() {
        for &(id, name) in &RUNTIME_SYNCS {
            assert_eq!(ApiDomain::Runtime.known_name(id), Some(name));
            assert!(is_sync(DOMAIN_RUNTIME_API, id));
        }
        for &(id, name) in &DRIVER_SYNCS {
            assert_eq!(ApiDomain::Driver.known_name(id), Some(name));
            assert!(is_sync(DOMAIN_DRIVER_API, id));
        }
        assert_eq!(sync_callbacks().count(), 8);
        assert!(!is_sync(DOMAIN_RUNTIME_API, 211));
    }

    #[test]
    fn a_thread_keeps_its_last_launches_and_its_blocking_sync() {
        std::thread::spawn(|| {
            for id in 1..=40 {
                // SAFETY: callback data with no parameters.
                unsafe { launched(DOMAIN_RUNTIME_API, 211, &data(id)) };
            }
            sync_call(DOMAIN_RUNTIME_API, 131, true);
            let t = mine(&threads_seen());
            assert_eq!(t.launch_count, 40);
            let ids: Vec<u32> = t.launches.iter().map(|l| l.correlation_id).collect();
            assert_eq!(
                ids,
                (25..=40).collect::<Vec<_>>(),
                "the last {RING}, oldest first"
            );
            let (call, _) = t.blocked_in.expect("blocked in cudaStreamSynchronize");
            assert_eq!((call.domain, call.cbid), (DOMAIN_RUNTIME_API, 131));
            sync_call(DOMAIN_RUNTIME_API, 131, false);
            let t = mine(&threads_seen());
            assert!(t.blocked_in.is_none());
            assert_eq!(t.last_sync.map(|(c, _)| c.cbid), Some(131));
            assert!(threads_seen().last_launch_ns > 0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_that_ended_gives_its_slot_back() {
        let tid = std::thread::spawn(|| {
            // SAFETY: as above.
            unsafe { launched(DOMAIN_RUNTIME_API, 211, &data(7)) };
            // SAFETY: gettid(2) cannot fail.
            unsafe { libc::gettid() as u64 }
        })
        .join()
        .unwrap();
        assert!(threads_seen().threads.iter().all(|t| t.tid != tid));
    }
}
