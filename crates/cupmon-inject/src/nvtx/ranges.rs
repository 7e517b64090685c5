//! NVTX ranges as cupmon annotations (no `unsafe` here: `tables.rs` decodes NVTX's
//! arguments). A pushed range, or a started one, pushes a CUPTI CUSTOM1 external
//! correlation id named after the range, so the GPU work launched inside it lands in
//! its `gpu_user_annotation` span, nested as pushed; popping or ending it pops the id.
//!
//! CUPTI has one external-id stack per thread; NVTX has one range stack per thread
//! and domain, and start/end ranges that need not nest. Each thread keeps its open
//! ranges in order here: closing the innermost one (the usual case) is one CUPTI pop;
//! closing one further down pops the ids above it and pushes them again, so CUPTI's
//! stack always holds exactly the thread's open ranges. A range ended on another
//! thread than the one that started it is closed by its own thread at that thread's
//! next NVTX call (CUPTI's stacks cannot be reached from elsewhere).
//!
//! Only NVTX's own entries are tracked here: a `cupmon.annotate` pushed on the same
//! thread between an NVTX push and an out-of-order NVTX close would be popped in the
//! NVTX range's place (properly nested use, the usual case, is exact).
//!
//! Cost of a push/pop pair: no allocation once a name has been seen on the thread
//! (names are interned per thread, registered strings once), no lock or `getpid` to
//! find the session (cached per thread until `session::SESSION_EPOCH` moves), and no
//! system call outside trace windows (`Monitor::push_shared_annotation` logs names only
//! when a record can name them). bench/nvtx/RESULTS.md has the figures.
//!
//! Each range's CPU side (thread, push and pop times on CLOCK_REALTIME, depth, domain,
//! category, color) goes with its annotation to the monitor
//! ([`Monitor::push_range`], [`Monitor::range_closed`]), which keeps it for windows.
//! The clock (CLOCK_REALTIME, a vDSO read of ~30 ns) is read only while a window is
//! prepared or open: a range opened before is drawn from the window's start anyway,
//! and one closed outside windows is drawn nowhere. The thread id is read once per
//! thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cupmon_monitor::{range_clock_ns, Monitor, RangeAttributes, RangeStart};

use super::seq::{self, SeqRange};
use crate::session::{Session, SESSION_EPOCH};

/// NVTX's default domain (a null handle); other domains are their handle's address.
pub(crate) type DomainKey = usize;
pub(crate) const DEFAULT_DOMAIN: DomainKey = 0;

/// The name of a range whose attributes carry no message.
const UNNAMED: &str = "(unnamed NVTX range)";
/// Distinct names interned per thread; names beyond are shared per call, not kept
/// (a program naming ranges "step 1", "step 2", ... must not grow memory forever).
const MAX_NAMES_PER_THREAD: usize = 4096;
/// Start/end ranges ended on another thread and not yet closed by their own thread.
const MAX_REMOTE_ENDS: usize = 65_536;

/// A range's message as NVTX gave it.
pub(crate) enum Message<'a> {
    Ascii(&'a [u8]),
    Registered(&'a Arc<str>),
    Text(String),
    None,
}

impl Message<'_> {
    /// The message as text (borrowed when it is UTF-8 already); empty for none.
    pub(crate) fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Message::Ascii(bytes) => String::from_utf8_lossy(bytes),
            Message::Registered(name) => std::borrow::Cow::Borrowed(name),
            Message::Text(text) => std::borrow::Cow::Borrowed(text),
            Message::None => std::borrow::Cow::Borrowed(""),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    Pushed,
    Started(u64),
}

struct Open {
    domain: DomainKey,
    how: How,
    /// The CUSTOM1 id pushed for it; none when no monitor ran at the push.
    id: Option<u64>,
    /// What its autograd sequence number did (`seq.rs`), undone at its close.
    seq: SeqRange,
}

/// An interned name and the autograd sequence number it carries (`seq.rs`), looked for
/// once.
type Named = (Arc<str>, Option<u64>);

/// A thread's open ranges and interned names.
#[derive(Default)]
pub(super) struct Ranges {
    open: Vec<Open>,
    names: HashMap<Box<[u8]>, Named>,
    /// The OS thread id (read at the session's change: a forked child's differs).
    thread_id: u32,
}

struct ThreadRanges {
    ranges: Ranges,
    /// The session as of `epoch` (`session::SESSION_EPOCH`).
    session: Option<Arc<Session>>,
    epoch: u64,
}

impl Default for ThreadRanges {
    fn default() -> Self {
        Self {
            ranges: Ranges::default(),
            session: None,
            epoch: u64::MAX,
        }
    }
}

thread_local! {
    static THREAD: RefCell<ThreadRanges> = RefCell::new(ThreadRanges::default());
}

static NEXT_RANGE_ID: AtomicU64 = AtomicU64::new(1);
/// (range, when it ended: 0 when no window wanted the time).
static REMOTE_ENDS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());
static REMOTE_PENDING: AtomicUsize = AtomicUsize::new(0);
static WARNED: AtomicBool = AtomicBool::new(false);

fn warn_once(what: &str, e: &dyn std::fmt::Display) {
    if !WARNED.swap(true, Ordering::Relaxed) {
        cupmon_log::warn!("NVTX range {what}: {e} (GPU work may miss its range in traces)");
    }
}

/// Run `f` on this thread's ranges and the running monitor (if any). A call during
/// thread teardown (thread-locals gone) does nothing.
pub(super) fn with_thread<T: Default>(f: impl FnOnce(&mut Ranges, Option<&Monitor>) -> T) -> T {
    THREAD
        .try_with(|t| {
            let Ok(mut t) = t.try_borrow_mut() else {
                return T::default();
            };
            let epoch = SESSION_EPOCH.load(Ordering::Acquire);
            if t.epoch != epoch {
                t.session = crate::session::current();
                t.epoch = epoch;
                t.ranges.thread_id = crate::owner::thread_id() as u32;
            }
            // The session borrowed, not cloned: no shared reference count touched.
            let ThreadRanges {
                ranges, session, ..
            } = &mut *t;
            let monitor = session.as_deref().map(|s| &s.monitor);
            if REMOTE_PENDING.load(Ordering::Relaxed) != 0 {
                close_remote_ends(ranges, monitor);
            }
            f(ranges, monitor)
        })
        .unwrap_or_default()
}

/// In a child made by `fork`: the parent's session is not this process's.
pub(crate) extern "C" fn forked() {
    SESSION_EPOCH.fetch_add(1, Ordering::SeqCst);
}

impl Ranges {
    /// The name of `message`, shared (no allocation for a name this thread has seen),
    /// and the autograd sequence number it carries.
    pub(super) fn intern(&mut self, message: Message<'_>) -> Named {
        match message {
            Message::Ascii(bytes) => {
                if let Some((name, seq)) = self.names.get(bytes) {
                    return (name.clone(), *seq);
                }
                let name: Arc<str> = Arc::from(String::from_utf8_lossy(bytes).as_ref());
                let seq = seq::seq_of(bytes);
                if self.names.len() < MAX_NAMES_PER_THREAD {
                    self.names.insert(bytes.into(), (name.clone(), seq));
                }
                (name, seq)
            }
            Message::Registered(name) => (name.clone(), seq::seq_of(name.as_bytes())),
            Message::Text(text) => {
                let seq = seq::seq_of(text.as_bytes());
                (Arc::from(text), seq)
            }
            Message::None => (Arc::from(UNNAMED), None),
        }
    }

    /// What a range or mark opened now on this thread says of its CPU side; its time
    /// only when `timed` (a window wants it: [`Monitor::wants_ranges`]), else 0.
    pub(super) fn start_here(&self, attributes: RangeAttributes, timed: bool) -> RangeStart {
        RangeStart {
            thread_id: self.thread_id,
            start_ns: if timed { range_clock_ns() } else { 0 },
            depth: self.open.len() as u32,
            attributes,
        }
    }

    fn open(
        &mut self,
        monitor: Option<&Monitor>,
        (domain, attributes): (DomainKey, RangeAttributes),
        how: How,
        message: Message<'_>,
    ) {
        let (id, seq) = match monitor {
            Some(m) => {
                let (name, number) = self.intern(message);
                let id = m
                    .push_range(&name, self.start_here(attributes, m.wants_ranges()))
                    .map_err(|e| warn_once("push", &e))
                    .ok();
                (id, seq::opened(number))
            }
            None => (None, SeqRange::Ignored),
        };
        self.open.push(Open {
            domain,
            how,
            id,
            seq,
        });
    }

    /// Close the open range at `index`, keeping CUPTI's stack equal to the rest; it
    /// ended at `ended_at` (ns; 0: now).
    fn close(&mut self, monitor: Option<&Monitor>, index: usize, ended_at: u64) {
        if let Some(m) = monitor {
            let above = &self.open[index + 1..];
            for open in above.iter().rev() {
                if open.id.is_some() {
                    let _ = m.pop_shared_annotation();
                }
            }
            if let Some(id) = self.open[index].id {
                if let Err(e) = m.pop_shared_annotation() {
                    warn_once("pop", &e);
                }
                let end_ns = match (m.wants_ranges(), ended_at) {
                    (false, _) => 0,
                    (true, 0) => range_clock_ns(),
                    (true, at) => at,
                };
                m.range_closed(id, end_ns);
            }
            for id in above.iter().filter_map(|o| o.id) {
                if let Err(e) = m.push_annotation_again(id) {
                    warn_once("push", &e);
                }
            }
        }
        seq::closed(self.open.remove(index).seq);
    }

    fn depth(&self, domain: DomainKey) -> i32 {
        self.open
            .iter()
            .filter(|o| o.domain == domain && o.how == How::Pushed)
            .count() as i32
    }
}

/// `nvtxRangePush*` / `nvtxDomainRangePushEx`: the 0-based level of the new range.
pub(crate) fn push(
    (domain, attributes): (DomainKey, RangeAttributes),
    message: Message<'_>,
) -> i32 {
    with_thread(|t, monitor| {
        let level = t.depth(domain);
        t.open(monitor, (domain, attributes), How::Pushed, message);
        level
    })
}

/// `nvtxRangePop` / `nvtxDomainRangePop`: the 0-based level of the range popped,
/// or -1 when the domain has none open on this thread.
pub(crate) fn pop(domain: DomainKey) -> i32 {
    with_thread(|t, monitor| {
        let Some(index) = t
            .open
            .iter()
            .rposition(|o| o.domain == domain && o.how == How::Pushed)
        else {
            return -1;
        };
        t.close(monitor, index, 0);
        t.depth(domain)
    })
}

/// `nvtxRangeStart*` / `nvtxDomainRangeStartEx`: the new range's id.
pub(crate) fn start(
    (domain, attributes): (DomainKey, RangeAttributes),
    message: Message<'_>,
) -> u64 {
    let range = NEXT_RANGE_ID.fetch_add(1, Ordering::Relaxed);
    with_thread(|t, monitor| t.open(monitor, (domain, attributes), How::Started(range), message));
    range
}

/// `nvtxRangeEnd` / `nvtxDomainRangeEnd`.
pub(crate) fn end(range: u64) {
    // (closed here, when it ended if a window wants the time).
    let (here, ended_at) = with_thread(|t, monitor| {
        match t.open.iter().rposition(|o| o.how == How::Started(range)) {
            Some(index) => {
                t.close(monitor, index, 0);
                (true, 0)
            }
            // Another thread's: it closes it at its next NVTX call, drawn to now.
            None if monitor.is_some_and(Monitor::wants_ranges) => (false, range_clock_ns()),
            None => (false, 0),
        }
    });
    if !here {
        let mut remote = REMOTE_ENDS.lock().unwrap_or_else(|p| p.into_inner());
        if remote.len() >= MAX_REMOTE_ENDS {
            // Ranges whose thread never called NVTX again (or ended one twice).
            remote.drain(..MAX_REMOTE_ENDS / 2);
        }
        remote.push((range, ended_at));
        REMOTE_PENDING.store(remote.len(), Ordering::Relaxed);
    }
}

fn close_remote_ends(t: &mut Ranges, monitor: Option<&Monitor>) {
    let mut remote = REMOTE_ENDS.lock().unwrap_or_else(|p| p.into_inner());
    remote.retain(|&(range, ended_at)| {
        match t.open.iter().rposition(|o| o.how == How::Started(range)) {
            Some(index) => {
                t.close(monitor, index, ended_at);
                false
            }
            None => true,
        }
    });
    REMOTE_PENDING.store(remote.len(), Ordering::Relaxed);
}
