//! cupmon's one callback subscription: launch counting, and the clients served
//! through it (`clients.rs`). The subscription is made once and kept for the life of
//! the process (a client may depend on it after cupmon's session ends); counting is
//! switched on and off with the callbacks it needs.

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::clients::{self, Client, Interest, ALL_DOMAINS, MAX_CLIENTS};
use super::counter;
use super::graphs;
use super::ids::{self, CallbackData, GraphData, Launch, ResourceData};
use super::inflight;
use super::stacks;
use crate::constants::CuptiStatus;
use crate::cupti::Cupti;
use crate::raw::{CallbackFn, RawStatus, SubscriberHandle};

/// Whether launches are being counted (read in every callback).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Why cupmon leaves CUPTI's one callback subscriber to other clients, when it must.
/// Before CUPTI 13.3 a process has one; when cupmon's CUPTI entry points are not the
/// ones the process calls (the Python API without `cupmon run`, nothing preloaded),
/// taking it would make torch.profiler's `cuptiSubscribe` fail. Set by the injection
/// library before a session starts.
static SLOT_LEFT: Mutex<Option<String>> = Mutex::new(None);

/// Leave CUPTI's callback subscriber to others (`Some(why)`: launches are then not
/// counted, and [`Cupti::start_counting_launches`] says why), or take it (`None`).
pub fn leave_callback_slot(why: Option<String>) {
    *SLOT_LEFT.lock().unwrap_or_else(|p| p.into_inner()) = why;
}
/// The clients as the callback sees them: a leaked list, replaced (never freed) when
/// a client changes, like the activity registration. Null: no client.
static VIEW: AtomicPtr<Vec<Client>> = AtomicPtr::new(ptr::null_mut());

#[derive(Debug, Default)]
struct State {
    cupti: Option<&'static Cupti>,
    /// cupmon's real subscriber (an address), once subscribed.
    real: Option<usize>,
    /// Why cupmon could not subscribe, from its last try.
    refusal: Option<String>,
    /// Why graph launches cannot be sized (the driver's graph functions are missing).
    graph_note: Option<String>,
    counting: bool,
    clients: Vec<Option<Client>>,
    /// Callbacks enabled one by one at the real subscriber, and domains enabled whole.
    enabled: BTreeSet<(u32, u32)>,
    domains: BTreeSet<u32>,
}

static STATE: Mutex<State> = Mutex::new(State {
    cupti: None,
    real: None,
    refusal: None,
    graph_note: None,
    counting: false,
    clients: Vec::new(),
    enabled: BTreeSet::new(),
    domains: BTreeSet::new(),
});

fn lock() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Enables (or disables) the copy and memset callbacks that noting stacks needs.
pub(crate) fn resync() {
    let mut state = lock();
    sync(&mut state);
}

/// Whether cupmon counts launches now, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counting {
    /// Counting; `graph_note` says why graph launches may go unsized.
    On { graph_note: Option<String> },
    /// Not counting: why (another subscriber came first, no callback API, ...).
    Off { reason: String },
}

/// What cupmon's counting subscription is doing.
pub fn launch_counting() -> Counting {
    let state = lock();
    if state.counting {
        return Counting::On {
            graph_note: state.graph_note.clone(),
        };
    }
    Counting::Off {
        reason: state
            .refusal
            .clone()
            .unwrap_or_else(|| "launch counting is off".to_owned()),
    }
}

/// Executable graphs known, and how many of them have no kernel count.
pub fn known_graphs() -> (u64, u64) {
    graphs::known_graphs()
}

impl Cupti {
    /// Subscribes cupmon's callback (once per process) and turns on the launch
    /// callbacks: from now on every kernel launched, eagerly or by a graph, adds to
    /// [`crate::launch_counts`]. `Err` says why counting is impossible (another
    /// subscriber came first, this libcupti has no callback API); then nothing counts.
    pub fn start_counting_launches(&'static self) -> Result<(), String> {
        if let Some(why) = SLOT_LEFT.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Err(why);
        }
        let mut state = lock();
        state.cupti.get_or_insert(self);
        if let Err(why) = graphs::load_driver(self.libcuda()) {
            state.graph_note = Some(format!(
                "the driver's graph functions could not be loaded ({why}): graph launches \
                 are counted as launches of unknown size"
            ));
        }
        ensure_subscribed(&mut state, self)?;
        state.counting = true;
        sync(&mut state);
        COUNTING.store(true, Ordering::Release);
        Ok(())
    }

    /// Stops counting (the counts stay); callbacks no client wants are turned off.
    pub fn stop_counting_launches(&self) {
        let mut state = lock();
        COUNTING.store(false, Ordering::Release);
        state.counting = false;
        sync(&mut state);
    }

    /// `cuptiSubscribe` for another client (the injection library's interposer): the
    /// client is served through cupmon's subscription, subscribed now if it is not
    /// yet. `None` when cupmon cannot subscribe: the caller passes the call to CUPTI.
    ///
    /// # Safety
    /// `out` must be valid for a write of a handle.
    pub unsafe fn subscribe_client(
        &'static self,
        out: *mut SubscriberHandle,
        callback: Option<CallbackFn>,
        userdata: *mut c_void,
    ) -> Option<RawStatus> {
        let mut state = lock();
        state.cupti.get_or_insert(self);
        ensure_subscribed(&mut state, self).ok()?;
        if out.is_null() {
            return Some(CuptiStatus::ERROR_INVALID_PARAMETER.0);
        }
        let Some(callback) = callback else {
            return Some(CuptiStatus::ERROR_INVALID_PARAMETER.0);
        };
        let slot = match state.clients.iter().position(Option::is_none) {
            Some(free) => free,
            None if state.clients.len() < MAX_CLIENTS => {
                state.clients.push(None);
                state.clients.len() - 1
            }
            None => return Some(CuptiStatus::ERROR_MAX_LIMIT_REACHED.0),
        };
        state.clients[slot] = Some(Client {
            callback,
            userdata: userdata as usize,
            interest: Interest::default(),
        });
        publish(&state);
        // SAFETY: checked non-null; valid for a write by the caller's contract.
        unsafe { out.write(clients::handle_of(slot)) };
        Some(CuptiStatus::SUCCESS.0)
    }
}

/// Whether `handle` is one cupmon gave a client.
pub fn is_client_handle(handle: SubscriberHandle) -> bool {
    clients::slot_of(handle)
        .is_some_and(|slot| lock().clients.get(slot).is_some_and(Option::is_some))
}

/// `cuptiUnsubscribe` of a client handle; `None` for any other handle.
pub fn unsubscribe_client(handle: SubscriberHandle) -> Option<RawStatus> {
    with_client(handle, |state, slot| {
        state.clients[slot] = None;
        CuptiStatus::SUCCESS.0
    })
}

/// `cuptiEnableCallback` of a client handle; `None` for any other handle.
pub fn client_enable_callback(
    handle: SubscriberHandle,
    enable: u32,
    domain: u32,
    cbid: u32,
) -> Option<RawStatus> {
    with_client(handle, |state, slot| {
        if !ALL_DOMAINS.contains(&domain) {
            return CuptiStatus::ERROR_INVALID_PARAMETER.0;
        }
        if let Some(c) = state.clients[slot].as_mut() {
            c.interest.enable_callback(enable != 0, domain, cbid);
        }
        CuptiStatus::SUCCESS.0
    })
}

/// `cuptiEnableDomain` of a client handle; `None` for any other handle.
pub fn client_enable_domain(
    handle: SubscriberHandle,
    enable: u32,
    domain: u32,
) -> Option<RawStatus> {
    with_client(handle, |state, slot| {
        if !ALL_DOMAINS.contains(&domain) {
            return CuptiStatus::ERROR_INVALID_PARAMETER.0;
        }
        if let Some(c) = state.clients[slot].as_mut() {
            c.interest.enable_domain(enable != 0, domain);
        }
        CuptiStatus::SUCCESS.0
    })
}

/// `cuptiEnableAllDomains` of a client handle; `None` for any other handle.
pub fn client_enable_all_domains(handle: SubscriberHandle, enable: u32) -> Option<RawStatus> {
    with_client(handle, |state, slot| {
        if let Some(c) = state.clients[slot].as_mut() {
            for domain in ALL_DOMAINS {
                c.interest.enable_domain(enable != 0, domain);
            }
        }
        CuptiStatus::SUCCESS.0
    })
}

/// `cuptiGetCallbackState` of a client handle: whether it enabled `(domain, cbid)`.
pub fn client_callback_state(
    handle: SubscriberHandle,
    domain: u32,
    cbid: u32,
) -> Option<Result<bool, RawStatus>> {
    let slot = clients::slot_of(handle)?;
    let state = lock();
    let client = state.clients.get(slot)?.as_ref()?;
    if !ALL_DOMAINS.contains(&domain) {
        return Some(Err(CuptiStatus::ERROR_INVALID_PARAMETER.0));
    }
    Some(Ok(client.interest.wants(domain, cbid)))
}

fn with_client(
    handle: SubscriberHandle,
    f: impl FnOnce(&mut State, usize) -> RawStatus,
) -> Option<RawStatus> {
    let slot = clients::slot_of(handle)?;
    let mut state = lock();
    state.clients.get(slot)?.as_ref()?;
    let status = f(&mut state, slot);
    publish(&state);
    sync(&mut state);
    Some(status)
}

fn ensure_subscribed(state: &mut State, cupti: &'static Cupti) -> Result<(), String> {
    if state.real.is_some() {
        return Ok(());
    }
    let Some(subscribe) = cupti.raw().subscribe else {
        let why = format!(
            "{} (CUPTI {}) has no callback API (cuptiSubscribe)",
            cupti.path().display(),
            cupti.version()
        );
        state.refusal = Some(why.clone());
        return Err(why);
    };
    let mut handle: SubscriberHandle = ptr::null_mut();
    // SAFETY: a valid out-pointer; the callback is an `extern "C"` function with
    // CUPTI's callback signature that never unwinds and lives for the process.
    let status = unsafe { subscribe(&mut handle, Some(on_callback), ptr::null_mut()) };
    match cupti.check(status, "cuptiSubscribe", None) {
        Ok(()) => {
            state.real = Some(handle as usize);
            state.refusal = None;
            Ok(())
        }
        Err(e) => {
            let why = if e.status == CuptiStatus::ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED {
                format!(
                    "another CUPTI callback subscriber (a profiler or tool in this process) came \
                     first, and this CUPTI allows one ({e})"
                )
            } else {
                format!("CUPTI refused cupmon's callback subscription ({e})")
            };
            state.refusal = Some(why.clone());
            Err(why)
        }
    }
}

/// Makes the clients' interest visible to the callback.
fn publish(state: &State) {
    let clients: Vec<Client> = state.clients.iter().flatten().cloned().collect();
    let view = if clients.is_empty() {
        ptr::null_mut()
    } else {
        Box::into_raw(Box::new(clients))
    };
    // The old list is leaked: a callback running now may still read it.
    VIEW.store(view, Ordering::Release);
}

/// Enables at the real subscriber what cupmon and the clients want, and disables the
/// rest. Failures for single ids (an older CUPTI without an id) are ignored.
fn sync(state: &mut State) {
    let (Some(cupti), Some(real)) = (state.cupti, state.real) else {
        return;
    };
    let real = real as SubscriberHandle;
    let raw = cupti.raw();
    let (Some(enable_callback), Some(enable_domain)) = (raw.enable_callback, raw.enable_domain)
    else {
        return;
    };
    let clients: Vec<&Client> = state.clients.iter().flatten().collect();
    let want_domains: BTreeSet<u32> = clients
        .iter()
        .flat_map(|c| c.interest.domains.iter().copied())
        .collect();
    let mut want: BTreeSet<(u32, u32)> = clients
        .iter()
        .flat_map(|c| c.interest.callbacks.iter().copied())
        .collect();
    if state.counting {
        want.extend(ids::counted_callbacks());
        want.extend(inflight::sync_callbacks());
        if stacks::python_stacks_noted() {
            want.extend(ids::copy_callbacks());
            want.insert((ids::DOMAIN_RESOURCE, ids::RESOURCE_GRAPHNODE_CLONED));
        }
    }
    for &domain in want_domains.difference(&state.domains.clone()) {
        // SAFETY: cupmon's own subscriber handle and plain values.
        unsafe { enable_domain(1, real, domain) };
        state.domains.insert(domain);
    }
    for domain in state.domains.clone().difference(&want_domains) {
        // SAFETY: as above.
        unsafe { enable_domain(0, real, *domain) };
        state.domains.remove(domain);
        state.enabled.retain(|&(d, _)| d != *domain);
    }
    for &(domain, cbid) in want.difference(&state.enabled.clone()) {
        if state.domains.contains(&domain) {
            continue;
        }
        // SAFETY: as above.
        if unsafe { enable_callback(1, real, domain, cbid) } == 0 {
            state.enabled.insert((domain, cbid));
        }
    }
    for &(domain, cbid) in state.enabled.clone().difference(&want) {
        if !state.domains.contains(&domain) {
            // SAFETY: as above.
            unsafe { enable_callback(0, real, domain, cbid) };
        }
        state.enabled.remove(&(domain, cbid));
    }
}

/// cupmon's callback: counts launches, sizes graphs, and hands clients theirs.
unsafe extern "C" fn on_callback(
    _userdata: *mut c_void,
    domain: u32,
    cbid: u32,
    data: *const c_void,
) {
    if data.is_null() {
        return;
    }
    // A panic must not unwind into CUDA; none is expected here (no allocation on the
    // launch path, poisoned locks are read through).
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if let Some(launch) = ids::launch_of(domain, cbid) {
            // SAFETY: CUPTI passes a `CUpti_CallbackData` for API domains.
            unsafe { on_launch(launch, domain, cbid, &*data.cast::<CallbackData>()) };
        } else if ids::is_copy(domain, cbid) || inflight::is_sync(domain, cbid) {
            // A call can be both (`cudaMemcpy` copies and synchronises): a copy's
            // Python stack is noted for its record, a synchronisation for hang records.
            // SAFETY: both are API-domain callbacks: CUPTI passes a `CUpti_CallbackData`.
            let data = unsafe { &*data.cast::<CallbackData>() };
            let entering = data.callback_site == ids::SITE_ENTER;
            if entering && ids::is_copy(domain, cbid) {
                stacks::note_launch(data.correlation_id);
            }
            if inflight::is_sync(domain, cbid) && COUNTING.load(Ordering::Relaxed) {
                inflight::sync_call(domain, cbid, entering);
            }
        } else if domain == ids::DOMAIN_RESOURCE && COUNTING.load(Ordering::Relaxed) {
            // SAFETY: CUPTI passes a `CUpti_ResourceData` for the resource domain.
            unsafe { on_resource(cbid, &*data.cast::<ResourceData>()) };
        }
        let view = VIEW.load(Ordering::Acquire);
        if !view.is_null() {
            // SAFETY: non-null views are leaked boxes, never freed.
            for client in unsafe { &*view } {
                if client.interest.wants(domain, cbid) {
                    // SAFETY: `data` is what CUPTI passed for this callback.
                    unsafe { client.call(domain, cbid, data) };
                }
            }
        }
    }));
}

/// A launch call entered or left. Counted when the outermost launch call of the thread
/// returns, and only when it succeeded.
///
/// # Safety
/// `data` must be CUPTI's callback data for a launch callback.
#[inline]
unsafe fn on_launch(launch: Launch, domain: u32, cbid: u32, data: &CallbackData) {
    if data.callback_site == ids::SITE_ENTER {
        if counter::enter() {
            // A replay of a graph whose nodes all have stacks: its records carry
            // theirs, so its own would be read for nothing.
            let replay_carries_stacks = matches!(launch, Launch::Graph)
                && stacks::python_stacks_noted()
                // SAFETY: the caller's contract (a launch callback's data).
                && graphs::replays_carry_stacks(unsafe { graph_exec(data) });
            if !replay_carries_stacks {
                stacks::note_launch(data.correlation_id);
            }
        }
        return;
    }
    if !counter::leave() || !COUNTING.load(Ordering::Relaxed) {
        return;
    }
    let returned = data.function_return_value.cast::<i32>();
    // SAFETY: at the exit site CUPTI points the return value at the call's
    // `cudaError_t`/`CUresult` (both C ints), or null.
    if !returned.is_null() && unsafe { returned.read_unaligned() } != 0 {
        return; // a failed launch runs nothing
    }
    // SAFETY: the caller's contract.
    unsafe { inflight::launched(domain, cbid, data) };
    match launch {
        Launch::Kernel => counter::add_kernel(),
        // SAFETY: the caller's contract (a graph launch's callback data).
        Launch::Graph => counter::add_graph(graphs::kernels_of(unsafe { graph_exec(data) })),
    }
}

/// The executable graph a graph launch launches (null when CUPTI gave no parameters).
///
/// # Safety
/// `data` must be CUPTI's callback data for `cudaGraphLaunch`/`cuGraphLaunch`.
unsafe fn graph_exec(data: &CallbackData) -> *const c_void {
    let params = data.function_params.cast::<*const c_void>();
    if params.is_null() {
        return ptr::null();
    }
    // SAFETY: the parameters of `cudaGraphLaunch`/`cuGraphLaunch` start with the
    // executable graph handle.
    unsafe { params.read_unaligned() }
}

/// # Safety
/// `data` must be CUPTI's resource data for resource callback `cbid`.
unsafe fn on_resource(cbid: u32, data: &ResourceData) {
    if cbid != ids::RESOURCE_GRAPHEXEC_CREATED
        && cbid != ids::RESOURCE_GRAPHEXEC_DESTROY_STARTING
        && cbid != ids::RESOURCE_GRAPHNODE_CREATED
        && cbid != ids::RESOURCE_GRAPHNODE_CLONED
    {
        return;
    }
    let graph = data.resource_descriptor.cast::<GraphData>();
    if graph.is_null() {
        return;
    }
    // SAFETY: for graph callbacks the descriptor is a `CUpti_GraphData`, valid for
    // the length of the callback.
    let graph = unsafe { &*graph };
    if cbid == ids::RESOURCE_GRAPHNODE_CREATED {
        if graph.node_type == ids::NODE_TYPE_KERNEL {
            counter::kernel_node_created();
        }
        if matches!(
            graph.node_type,
            ids::NODE_TYPE_KERNEL | ids::NODE_TYPE_MEMCPY | ids::NODE_TYPE_MEMSET
        ) {
            stacks::node_created(graph.node);
        }
    } else if cbid == ids::RESOURCE_GRAPHNODE_CLONED {
        stacks::node_cloned(graph.original_node, graph.node);
    } else if cbid == ids::RESOURCE_GRAPHEXEC_CREATED {
        graphs::exec_created(graph.graph, graph.graph_exec, stacks::node_has_stack);
    } else {
        graphs::exec_destroyed(graph.graph_exec);
    }
}
