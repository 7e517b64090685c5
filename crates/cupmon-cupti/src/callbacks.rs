//! CUPTI's buffer callbacks, made safe: `extern "C"` trampolines that lend
//! [`ActivityBuffer`]s from an [`ActivitySink`] to CUPTI and hand completed ones
//! back as [`CompletedBuffer`]s.
//!
//! CUPTI takes two plain C function pointers and no user data, so the sink lives
//! in a process-global. Buffers lent to CUPTI are remembered in a map from
//! pointer to capacity: the completion trampoline rebuilds (and may free) only a
//! pointer it finds there. A pointer cupmon never lent (another CUPTI client's
//! buffer, delivered to cupmon after a re-registration) is counted and left alone.

use std::collections::HashMap;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::buffer::{ActivityBuffer, CompletedBuffer};
use crate::cupti::Cupti;
use crate::error::CuptiError;
use crate::raw::RawContext;

/// Owns cupmon's buffers on CUPTI's behalf. Both methods are called from CUPTI's
/// threads (and from the thread in `cuptiActivityFlushAll`), possibly at once:
/// they must be quick and must not block on work that waits for CUPTI.
pub trait ActivitySink: Send + Sync + 'static {
    /// A buffer for CUPTI to fill; `None` makes CUPTI drop records (and count them,
    /// see [`CompletedBuffer::dropped`]). Called on the application's launch path.
    fn request_buffer(&self) -> Option<ActivityBuffer>;

    /// A buffer CUPTI has finished with.
    fn buffer_completed(&self, completed: CompletedBuffer);
}

/// Counters kept by the trampolines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallbackStats {
    /// Buffers lent to CUPTI and not yet completed.
    pub outstanding_buffers: u64,
    pub outstanding_bytes: u64,
    /// Buffer requests answered with no buffer (the sink returned `None`).
    pub requests_refused: u64,
    /// Completed buffers cupmon did not lend, left to their owner.
    pub foreign_buffers: u64,
    /// Completed buffers of cupmon's that arrived while no sink was registered (freed).
    pub orphaned_buffers: u64,
    /// Panics caught in the sink (logged once on stderr).
    pub panics: u64,
}

struct Registration {
    cupti: &'static Cupti,
    sink: &'static dyn ActivitySink,
}

/// The current registration: a leaked `Registration`, replaced (never freed) by a
/// later registration, so a trampoline that loaded the old one can keep using it.
static REGISTRATION: AtomicPtr<Registration> = AtomicPtr::new(ptr::null_mut());
static OUTSTANDING: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);
static REQUESTS_REFUSED: AtomicU64 = AtomicU64::new(0);
static FOREIGN_BUFFERS: AtomicU64 = AtomicU64::new(0);
static ORPHANED_BUFFERS: AtomicU64 = AtomicU64::new(0);
static PANICS: AtomicU64 = AtomicU64::new(0);

impl Cupti {
    /// `cuptiActivityRegisterCallbacks` with cupmon's trampolines, delivering to
    /// `sink`. Calling it again (e.g. to take the callbacks back after another
    /// client registered its own) replaces the sink; buffers still lent to CUPTI
    /// go to the new sink when they complete.
    pub fn register_callbacks(
        &'static self,
        sink: &'static dyn ActivitySink,
    ) -> Result<(), CuptiError> {
        let registration = Box::into_raw(Box::new(Registration { cupti: self, sink }));
        // Published before CUPTI can call a trampoline.
        REGISTRATION.store(registration, Ordering::Release);
        // SAFETY: both trampolines have the C signatures CUPTI documents for these
        // callbacks, never unwind, and stay valid for the life of the process.
        let status = unsafe {
            (self.raw().activity_register_callbacks)(request_trampoline, complete_trampoline)
        };
        self.check(status, "cuptiActivityRegisterCallbacks", None)
    }
}

/// What the trampolines have counted so far.
pub fn callback_stats() -> CallbackStats {
    let outstanding = lock_outstanding();
    let map = outstanding.as_ref();
    CallbackStats {
        outstanding_buffers: map.map_or(0, |m| m.len() as u64),
        outstanding_bytes: map.map_or(0, |m| m.values().map(|&size| size as u64).sum()),
        requests_refused: REQUESTS_REFUSED.load(Ordering::Relaxed),
        foreign_buffers: FOREIGN_BUFFERS.load(Ordering::Relaxed),
        orphaned_buffers: ORPHANED_BUFFERS.load(Ordering::Relaxed),
        panics: PANICS.load(Ordering::Relaxed),
    }
}

fn lock_outstanding() -> MutexGuard<'static, Option<HashMap<usize, usize>>> {
    // A panic while holding this lock cannot leave the map half-updated (single
    // insert/remove calls), so a poisoned lock is still consistent.
    OUTSTANDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn registration() -> Option<&'static Registration> {
    let registration = REGISTRATION.load(Ordering::Acquire);
    // SAFETY: non-null values are leaked boxes, never freed, published with Release.
    unsafe { registration.as_ref() }
}

/// Runs `f`, turning a panic into a logged count instead of an unwind into CUDA.
fn guard(what: &str, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() && PANICS.fetch_add(1, Ordering::Relaxed) == 0 {
        // `eprintln!` could itself panic on a closed stderr; a failed write is ignored.
        let _ = writeln!(
            std::io::stderr(),
            "cupmon: panic in the CUPTI {what} callback; it was caught and collection goes on \
             (further panics are counted, not logged)"
        );
    }
}

/// CUPTI asks for an empty buffer.
unsafe extern "C" fn request_trampoline(
    buffer: *mut *mut u8,
    size: *mut usize,
    max_records: *mut usize,
) {
    if buffer.is_null() || size.is_null() {
        return;
    }
    // SAFETY: CUPTI passes valid out-pointers. Answer "no buffer" first, so a panic
    // below leaves CUPTI with a well-formed refusal.
    unsafe {
        *buffer = ptr::null_mut();
        *size = 0;
        if !max_records.is_null() {
            *max_records = 0; // fill the buffer with as many records as fit
        }
    }
    guard("buffer-request", || {
        let lent = registration().and_then(|r| r.sink.request_buffer());
        let Some(lent) = lent else {
            REQUESTS_REFUSED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let (ptr, capacity) = lent.into_raw();
        // Remembered before CUPTI sees the pointer, so its completion always finds it.
        lock_outstanding()
            .get_or_insert_with(HashMap::new)
            .insert(ptr.as_ptr() as usize, capacity);
        // SAFETY: valid out-pointers (checked above). Ownership of the allocation
        // passes to CUPTI until the completion callback returns it.
        unsafe {
            *buffer = ptr.as_ptr();
            *size = capacity;
        }
    });
}

/// CUPTI returns a buffer.
unsafe extern "C" fn complete_trampoline(
    context: RawContext,
    stream_id: u32,
    buffer: *mut u8,
    _size: usize,
    valid_size: usize,
) {
    guard("buffer-completion", || {
        let lent = lock_outstanding()
            .as_mut()
            .and_then(|map| map.remove(&(buffer as usize)));
        let (Some(capacity), Some(ptr)) = (lent, NonNull::new(buffer)) else {
            // Not lent by cupmon: someone else's memory, never ours to free or read.
            FOREIGN_BUFFERS.fetch_add(1, Ordering::Relaxed);
            return;
        };
        // SAFETY: `ptr` was handed out by `request_trampoline` from `into_raw` with
        // this capacity, and removing it from the map makes this the only rebuild;
        // CUPTI relinquishes the buffer when it calls this callback.
        let owned = unsafe { ActivityBuffer::from_raw(ptr, capacity) };
        let Some(registration) = registration() else {
            ORPHANED_BUFFERS.fetch_add(1, Ordering::Relaxed);
            return; // dropping `owned` frees it
        };
        let cupti = registration.cupti;
        // SAFETY: the context is the one CUPTI passed to this callback (or null).
        let dropped = unsafe { cupti.dropped_records_in(context, stream_id) }.unwrap_or(0);
        let completed = CompletedBuffer::from_cupti(
            owned,
            valid_size,
            stream_id,
            context as u64,
            dropped,
            cupti.version(),
        );
        registration.sink.buffer_completed(completed);
    });
}
