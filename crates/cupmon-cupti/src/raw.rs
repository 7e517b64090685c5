//! The raw CUPTI entry points: C signatures written from CUPTI's documentation
//! (NVIDIA's headers are not copied), resolved from libcupti's own handle.
//!
//! `cupmon-inject` interposes some of these names (it exports
//! `cuptiActivityEnable` etc. and is `LD_PRELOAD`ed). The pointers here come from
//! `dlsym` on the handle of the libcupti that was opened, which searches that
//! library and its dependencies only, never the global scope where an
//! interposer's symbols would win; so they are always the real functions, and the
//! injection library calls the real CUPTI through them.

use std::ffi::{c_char, c_uint, c_void};

use libloading::Library;

/// `CUptiResult`.
pub type RawStatus = c_uint;
/// `CUcontext`.
pub type RawContext = *mut c_void;

/// `CUpti_BuffersCallbackRequestFunc(uint8_t **buffer, size_t *size, size_t *maxNumRecords)`.
pub type RequestCallback = unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
/// `CUpti_BuffersCallbackCompleteFunc(CUcontext, uint32_t streamId, uint8_t *buffer, size_t size, size_t validSize)`.
pub type CompleteCallback = unsafe extern "C" fn(RawContext, u32, *mut u8, usize, usize);

pub type GetVersionFn = unsafe extern "C" fn(*mut u32) -> RawStatus;
/// `cuptiGetResultString` and `cuptiGetErrorMessage`.
pub type GetStringFn = unsafe extern "C" fn(RawStatus, *mut *const c_char) -> RawStatus;
pub type RegisterCallbacksFn = unsafe extern "C" fn(RequestCallback, CompleteCallback) -> RawStatus;
/// `cuptiActivityEnable`, `cuptiActivityDisable`.
pub type KindFn = unsafe extern "C" fn(c_uint) -> RawStatus;
/// `cuptiActivityEnableContext`, `cuptiActivityDisableContext`.
pub type ContextKindFn = unsafe extern "C" fn(RawContext, c_uint) -> RawStatus;
pub type FlushAllFn = unsafe extern "C" fn(u32) -> RawStatus;
pub type GetNumDroppedRecordsFn = unsafe extern "C" fn(RawContext, u32, *mut usize) -> RawStatus;
/// `cuptiActivityEnableRuntimeApi`, `cuptiActivityEnableDriverApi` (cbid, enable).
pub type EnableApiFn = unsafe extern "C" fn(u32, u8) -> RawStatus;
pub type SetThreadIdTypeFn = unsafe extern "C" fn(c_uint) -> RawStatus;
pub type GetTimestampFn = unsafe extern "C" fn(*mut u64) -> RawStatus;
pub type PushExternalCorrelationIdFn = unsafe extern "C" fn(c_uint, u64) -> RawStatus;
pub type PopExternalCorrelationIdFn = unsafe extern "C" fn(c_uint, *mut u64) -> RawStatus;
pub type GetLastErrorFn = unsafe extern "C" fn() -> RawStatus;

/// `CUpti_SubscriberHandle`: CUPTI's opaque handle of a callback subscriber.
pub type SubscriberHandle = *mut c_void;
/// `CUpti_CallbackFunc(void *userdata, CUpti_CallbackDomain, CUpti_CallbackId, const void *cbdata)`.
pub type CallbackFn = unsafe extern "C" fn(*mut c_void, u32, u32, *const c_void);
/// `cuptiSubscribe(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *userdata)`.
pub type SubscribeFn =
    unsafe extern "C" fn(*mut SubscriberHandle, Option<CallbackFn>, *mut c_void) -> RawStatus;
/// `cuptiUnsubscribe(CUpti_SubscriberHandle)`.
pub type UnsubscribeFn = unsafe extern "C" fn(SubscriberHandle) -> RawStatus;
/// `cuptiGetGraphNodeId(CUgraphNode, uint64_t *id)`: the id kernel records carry as
/// `graphNodeId`.
pub type GetGraphNodeIdFn = unsafe extern "C" fn(*mut c_void, *mut u64) -> RawStatus;
/// `cuptiEnableCallback(uint32_t enable, subscriber, domain, cbid)`.
pub type EnableCallbackFn = unsafe extern "C" fn(u32, SubscriberHandle, u32, u32) -> RawStatus;
/// `cuptiEnableDomain(uint32_t enable, subscriber, domain)`.
pub type EnableDomainFn = unsafe extern "C" fn(u32, SubscriberHandle, u32) -> RawStatus;
/// `cuptiEnableAllDomains(uint32_t enable, subscriber)`.
pub type EnableAllDomainsFn = unsafe extern "C" fn(u32, SubscriberHandle) -> RawStatus;
/// `cuptiGetCallbackState(uint32_t *enable, subscriber, domain, cbid)`.
pub type GetCallbackStateFn =
    unsafe extern "C" fn(*mut u32, SubscriberHandle, u32, u32) -> RawStatus;
/// `cuptiActivityFlushPeriod(uint32_t time_ms)`: CUPTI's own periodic flush.
pub type FlushPeriodFn = unsafe extern "C" fn(u32) -> RawStatus;
/// `cuptiActivitySetAttribute(CUpti_ActivityAttribute, size_t *valueSize, void *value)`.
pub type SetAttributeFn = unsafe extern "C" fn(u32, *mut usize, *mut c_void) -> RawStatus;

/// The CUPTI functions cupmon calls. Optional ones are missing from older CUPTI
/// releases. Reading a field is safe; calling it is `unsafe` and must follow
/// CUPTI's documented contract for that function.
#[derive(Debug, Clone, Copy)]
pub struct RawApi {
    pub get_version: GetVersionFn,
    pub get_result_string: GetStringFn,
    pub get_error_message: Option<GetStringFn>,
    pub activity_register_callbacks: RegisterCallbacksFn,
    pub activity_enable: KindFn,
    pub activity_disable: KindFn,
    pub activity_enable_context: Option<ContextKindFn>,
    pub activity_disable_context: Option<ContextKindFn>,
    pub activity_flush_all: FlushAllFn,
    pub activity_get_num_dropped_records: GetNumDroppedRecordsFn,
    pub activity_enable_runtime_api: Option<EnableApiFn>,
    pub activity_enable_driver_api: Option<EnableApiFn>,
    pub set_thread_id_type: SetThreadIdTypeFn,
    pub get_timestamp: GetTimestampFn,
    pub activity_push_external_correlation_id: PushExternalCorrelationIdFn,
    pub activity_pop_external_correlation_id: PopExternalCorrelationIdFn,
    pub get_last_error: GetLastErrorFn,
    /// The callback API (launch counting, and other clients' subscriptions).
    pub subscribe: Option<SubscribeFn>,
    pub unsubscribe: Option<UnsubscribeFn>,
    pub enable_callback: Option<EnableCallbackFn>,
    pub enable_domain: Option<EnableDomainFn>,
    pub enable_all_domains: Option<EnableAllDomainsFn>,
    pub get_callback_state: Option<GetCallbackStateFn>,
    /// Graph node ids (the Python stacks of graph kernels, by node).
    pub get_graph_node_id: Option<GetGraphNodeIdFn>,
    /// CUPTI's settings the GPU sweeps try (`CUPMON_CUPTI_*`).
    pub activity_flush_period: Option<FlushPeriodFn>,
    pub activity_set_attribute: Option<SetAttributeFn>,
}

impl RawApi {
    /// Resolves every function from `library`'s handle. A missing required
    /// function is reported by its name.
    ///
    /// # Safety
    /// `library` must be a libcupti (or a stand-in) whose exported functions of
    /// these names have the C signatures declared above, and it must stay loaded
    /// for as long as the returned pointers are used.
    pub unsafe fn resolve(library: &Library) -> Result<Self, String> {
        macro_rules! required {
            ($name:literal) => {
                // SAFETY: the caller guarantees the symbol has the declared C
                // signature; the pointer is copied out and outlives the `Symbol`
                // only as long as the library stays loaded, which the caller also
                // guarantees.
                unsafe { optional_symbol(library, $name) }
                    .ok_or_else(|| format!("it does not export {}", $name))?
            };
        }
        macro_rules! optional {
            ($name:literal) => {
                // SAFETY: as for the required symbols above.
                unsafe { optional_symbol(library, $name) }
            };
        }
        Ok(RawApi {
            get_version: required!("cuptiGetVersion"),
            get_result_string: required!("cuptiGetResultString"),
            get_error_message: optional!("cuptiGetErrorMessage"),
            activity_register_callbacks: required!("cuptiActivityRegisterCallbacks"),
            activity_enable: required!("cuptiActivityEnable"),
            activity_disable: required!("cuptiActivityDisable"),
            activity_enable_context: optional!("cuptiActivityEnableContext"),
            activity_disable_context: optional!("cuptiActivityDisableContext"),
            activity_flush_all: required!("cuptiActivityFlushAll"),
            activity_get_num_dropped_records: required!("cuptiActivityGetNumDroppedRecords"),
            activity_enable_runtime_api: optional!("cuptiActivityEnableRuntimeApi"),
            activity_enable_driver_api: optional!("cuptiActivityEnableDriverApi"),
            set_thread_id_type: required!("cuptiSetThreadIdType"),
            get_timestamp: required!("cuptiGetTimestamp"),
            activity_push_external_correlation_id: required!(
                "cuptiActivityPushExternalCorrelationId"
            ),
            activity_pop_external_correlation_id: required!(
                "cuptiActivityPopExternalCorrelationId"
            ),
            get_last_error: required!("cuptiGetLastError"),
            subscribe: optional!("cuptiSubscribe"),
            get_graph_node_id: optional!("cuptiGetGraphNodeId"),
            unsubscribe: optional!("cuptiUnsubscribe"),
            enable_callback: optional!("cuptiEnableCallback"),
            enable_domain: optional!("cuptiEnableDomain"),
            enable_all_domains: optional!("cuptiEnableAllDomains"),
            get_callback_state: optional!("cuptiGetCallbackState"),
            activity_flush_period: optional!("cuptiActivityFlushPeriod"),
            activity_set_attribute: optional!("cuptiActivitySetAttribute"),
        })
    }
}

/// Looks `name` up in `library` (not in the global scope).
///
/// # Safety
/// `T` must be the pointer type matching the symbol's C definition, and the
/// library must stay loaded while the returned value is used.
pub(crate) unsafe fn optional_symbol<T: Copy>(library: &Library, name: &str) -> Option<T> {
    // SAFETY: the caller guarantees `T` matches the symbol; `Library::get` calls
    // `dlsym` on this library's handle.
    unsafe { library.get::<T>(name.as_bytes()).ok().map(|symbol| *symbol) }
}
