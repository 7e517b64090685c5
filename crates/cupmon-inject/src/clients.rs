//! Other CUPTI clients of the process (torch.profiler's Kineto above all), as
//! cupmon's multiplexer sees them: the buffer callbacks and timestamp clock
//! they registered, and the delivery of their records.
//!
//! CUPTI (before 13.3) has one set of activity callbacks per process. When
//! cupmon interposes `cuptiActivityRegisterCallbacks`, it keeps the real
//! registration and gives each client, for every completed buffer, a copy of
//! the records of the kinds that client enabled, in buffers obtained from the
//! client's own request callback, completed through its own completion
//! callback: what the client would have received alone.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use cupmon_cupti::raw::{CompleteCallback, RequestCallback};
use cupmon_cupti::{Cupti, Owner};
use cupmon_monitor::BufferObserver;
use cupmon_records::kinds::family_of;
use cupmon_records::ActivityKind;
use cupmon_records::Layout;

/// A client's timestamp source (`cuptiActivityRegisterTimestampCallback`).
pub(crate) type ClockFn = unsafe extern "C" fn() -> u64;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Client {
    pub request: RequestCallback,
    pub complete: CompleteCallback,
    /// Records are handed over in this clock (CUPTI itself stays on its
    /// default clock, which cupmon's dump relies on).
    pub clock: Option<ClockFn>,
    /// The first (client clock, Unix ns) reading, for the clock's rate.
    pub calibration: Option<(u64, u64)>,
}

static CLIENTS: Mutex<Vec<Client>> = Mutex::new(Vec::new());
/// A clock registered before the callbacks it belongs to.
static PENDING_CLOCK: Mutex<Option<ClockFn>> = Mutex::new(None);
/// While set, runtime and driver records are not handed to clients (a
/// cupmon window merged into the client's trace brings its own).
pub(crate) static WITHHOLD_API: AtomicBool = AtomicBool::new(false);
/// Records a client could not take (its request callback gave no buffer).
pub(crate) static CLIENT_DROPS: AtomicU64 = AtomicU64::new(0);

fn lock() -> MutexGuard<'static, Vec<Client>> {
    CLIENTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Record a client's callbacks; returns its owner id. Registering the same
/// pair again (Kineto does, per profiling session) keeps its id.
pub(crate) fn register(request: RequestCallback, complete: CompleteCallback) -> Owner {
    let mut clients = lock();
    let pending = PENDING_CLOCK
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    let found = clients.iter().position(|c| {
        c.request as usize == request as usize && c.complete as usize == complete as usize
    });
    let index = match found {
        Some(i) => i,
        None => {
            clients.push(Client {
                request,
                complete,
                clock: None,
                calibration: None,
            });
            clients.len() - 1
        }
    };
    if let Some(clock) = pending {
        set_clock(&mut clients[index], clock);
    }
    Owner::Client(index)
}

/// The client whose calls arrive now: CUPTI's API does not say who calls
/// `cuptiActivityEnable`, so it is the one that registered last.
pub(crate) fn current() -> Owner {
    Owner::Client(lock().len().saturating_sub(1))
}

pub(crate) fn any() -> bool {
    !lock().is_empty()
}

pub(crate) fn register_clock(clock: ClockFn) {
    let mut clients = lock();
    match clients.last_mut() {
        Some(client) => set_clock(client, clock),
        None => *PENDING_CLOCK.lock().unwrap_or_else(|p| p.into_inner()) = Some(clock),
    }
}

fn set_clock(client: &mut Client, clock: ClockFn) {
    client.clock = Some(clock);
    // SAFETY: the client registered this as a CUPTI timestamp callback: a
    // plain function returning its current time.
    client.calibration = Some((unsafe { clock() }, unix_ns()));
}

/// The single client's callbacks, to hand back to CUPTI when cupmon stops.
pub(crate) fn only() -> Option<Client> {
    let clients = lock();
    (clients.len() == 1).then(|| clients[0])
}

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Maps CUPTI's default clock (Unix ns) to a client's clock, from two
/// readings: the registration's and one taken now.
struct ClockMap {
    now_client: u64,
    now_unix: u64,
    rate: f64,
}

impl ClockMap {
    fn for_client(client: &Client) -> Option<Self> {
        let clock = client.clock?;
        // SAFETY: as in `set_clock`.
        let now_client = unsafe { clock() };
        let now_unix = unix_ns();
        let rate = match client.calibration {
            Some((c0, u0)) if now_unix > u0 + 1_000_000 && now_client > c0 => {
                (now_client - c0) as f64 / (now_unix - u0) as f64
            }
            _ => 1.0,
        };
        Some(Self {
            now_client,
            now_unix,
            rate,
        })
    }

    fn map(&self, unix: u64) -> u64 {
        if unix == 0 || unix == u64::MAX {
            return unix;
        }
        let delta = (unix as f64 - self.now_unix as f64) * self.rate;
        (self.now_client as f64 + delta).max(0.0) as u64
    }
}

/// Byte offsets of the u64 timestamps of a record kind (each kind file declares them).
fn timestamp_offsets(kind: u32) -> &'static [usize] {
    family_of(ActivityKind(kind)).map_or(&[], |f| f.timestamps)
}

/// A buffer lent by a client, being filled.
#[derive(Debug)]
struct Outgoing {
    ptr: *mut u8,
    capacity: usize,
    used: usize,
}

// SAFETY: the pointer is a client buffer that only cupmon writes to until it
// hands it back; it is moved between threads, never shared.
unsafe impl Send for Outgoing {}

/// Each client's open buffer. Like CUPTI, cupmon keeps one buffer of each
/// client in hand between deliveries: Kineto skips its final flush (and loses
/// the buffers it already has) when none of its buffers is outstanding.
static OPEN: Mutex<Vec<(usize, Outgoing)>> = Mutex::new(Vec::new());

fn take_open(index: usize) -> Option<Outgoing> {
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    let at = open.iter().position(|(i, _)| *i == index)?;
    Some(open.swap_remove(at).1)
}

fn put_open(index: usize, out: Outgoing) {
    OPEN.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((index, out));
}

/// Make sure a client holds an open buffer, as it would under CUPTI (which
/// asks for one as soon as a kind is on).
pub(crate) fn ensure_open(owner: Owner) {
    let Owner::Client(index) = owner else { return };
    let client = match lock().get(index) {
        Some(c) => *c,
        None => return,
    };
    let has_open = OPEN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .any(|(i, _)| *i == index);
    if !has_open {
        if let Some(out) = request(&client) {
            put_open(index, out);
        }
    }
}

/// Hand every client its open buffer (their flush, or cupmon's end).
pub(crate) fn complete_open() {
    let clients: Vec<Client> = lock().clone();
    let open = std::mem::take(&mut *OPEN.lock().unwrap_or_else(|p| p.into_inner()));
    for (index, out) in open {
        if let Some(client) = clients.get(index) {
            complete(client, out);
        }
    }
}

fn request(client: &Client) -> Option<Outgoing> {
    let (mut ptr, mut size, mut max_records) = (std::ptr::null_mut(), 0usize, 0usize);
    // SAFETY: the client's request callback, called as CUPTI would, with
    // valid out-pointers.
    unsafe { (client.request)(&mut ptr, &mut size, &mut max_records) };
    (!ptr.is_null() && size > 0).then_some(Outgoing {
        ptr,
        capacity: size,
        used: 0,
    })
}

fn complete(client: &Client, out: Outgoing) {
    // SAFETY: the buffer came from this client's request callback and holds
    // `used` bytes of whole records; context NULL and stream 0 are what CUPTI
    // passes for its global queue.
    unsafe { (client.complete)(std::ptr::null_mut(), 0, out.ptr, out.capacity, out.used) };
}

/// Hands each client its share of every buffer cupmon completes.
#[derive(Debug)]
pub(crate) struct Fanout {
    pub cupti: &'static Cupti,
}

impl BufferObserver for Fanout {
    fn on_buffer(&self, records: &[u8], cupti_version: u32) {
        let clients: Vec<Client> = lock().clone();
        if clients.is_empty() {
            return;
        }
        let Ok(layout) = Layout::for_api_version(cupti_version) else {
            return;
        };
        for (index, client) in clients.iter().enumerate() {
            let kinds: Vec<u32> = self
                .cupti
                .kinds_of(Owner::Client(index))
                .into_iter()
                .map(|k| k.0)
                .filter(|&k| !(WITHHOLD_API.load(Ordering::Relaxed) && (k == 4 || k == 5)))
                .collect();
            if !kinds.is_empty() {
                deliver(index, client, &kinds, records, layout);
            }
        }
    }
}

fn deliver(index: usize, client: &Client, kinds: &[u32], records: &[u8], layout: Layout) {
    let clock = ClockMap::for_client(client);
    let mut out: Option<Outgoing> = take_open(index);
    let mut offset = 0;
    while offset + 4 <= records.len() {
        let kind = u32::from_le_bytes(records[offset..offset + 4].try_into().unwrap_or_default());
        let Some(size) = layout.record_size(kind) else {
            // A kind cupmon cannot size: the rest of the buffer is lost to clients.
            CLIENT_DROPS.fetch_add(1, Ordering::Relaxed);
            break;
        };
        let Some(record) = records.get(offset..offset + size) else {
            break;
        };
        offset += size;
        if !kinds.contains(&kind) {
            continue;
        }
        if out.as_ref().is_none_or(|o| o.used + size > o.capacity) {
            if let Some(full) = out.take() {
                complete(client, full);
            }
            // A buffer too small for one record is returned empty.
            out = request(client).and_then(|o| {
                if o.capacity >= size {
                    Some(o)
                } else {
                    complete(client, o);
                    None
                }
            });
        }
        let Some(o) = out.as_mut() else {
            CLIENT_DROPS.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        // SAFETY: `o.ptr` has `o.capacity` bytes (the client's contract) and
        // `used + size <= capacity` was checked above.
        let dest = unsafe { std::slice::from_raw_parts_mut(o.ptr.add(o.used), size) };
        dest.copy_from_slice(record);
        if let Some(map) = &clock {
            for &at in timestamp_offsets(kind).iter().filter(|&&at| at + 8 <= size) {
                let value = u64::from_le_bytes(dest[at..at + 8].try_into().unwrap_or_default());
                dest[at..at + 8].copy_from_slice(&map.map(value).to_le_bytes());
            }
        }
        o.used += size;
    }
    if let Some(open) = out {
        put_open(index, open);
    }
}
