//! CUPTI's C types and numbers as the fake implements them, written here from
//! CUPTI's documentation rather than taken from `cupmon-cupti`: the fake is the
//! other side of that crate's declarations, so a wrong number there fails a
//! test instead of agreeing with itself.

use cupmon_records::c_enum;

/// `CUptiResult`.
pub(crate) type RawStatus = u32;

/// `CUpti_BuffersCallbackRequestFunc(uint8_t **buffer, size_t *size, size_t *maxNumRecords)`.
pub(crate) type RequestCallback = unsafe extern "C" fn(*mut *mut u8, *mut usize, *mut usize);
/// `CUpti_BuffersCallbackCompleteFunc(CUcontext, uint32_t streamId, uint8_t *buffer, size_t size, size_t validSize)`.
pub(crate) type CompleteCallback =
    unsafe extern "C" fn(*mut std::ffi::c_void, u32, *mut u8, usize, usize);

c_enum! {
    /// The `CUptiResult` values the fake returns (CUPTI has more; the fake's
    /// `cuptiGetResultString` names these only).
    Status {
        SUCCESS = 0,
        ERROR_INVALID_PARAMETER = 1,
        ERROR_INVALID_OPERATION = 7,
        ERROR_QUEUE_EMPTY = 18,
        ERROR_INVALID_KIND = 21,
        ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
    }
}

c_enum! {
    /// `CUpti_ActivityThreadIdType`.
    ThreadIdType {
        DEFAULT = 0,
        SYSTEM = 1,
    }
}

/// `CUPTI_ACTIVITY_FLAG_FLUSH_FORCED`, the flag of `cuptiActivityFlushAll`.
pub(crate) const FLUSH_FORCED: u32 = 1;

/// `CUPTI_ACTIVITY_MEMORY_KIND_DEVICE`.
pub(crate) const MEMORY_KIND_DEVICE: u32 = 3;
/// `CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL`.
pub(crate) const MEMORY_POOL_TYPE_LOCAL: u32 = 1;

/// `CUpti_CallbackFunc(void *userdata, domain, cbid, const void *cbdata)`.
pub(crate) type CallbackFn =
    unsafe extern "C" fn(*mut std::ffi::c_void, u32, u32, *const std::ffi::c_void);

/// `CUpti_CallbackDomain` values the fake issues.
pub(crate) const DOMAIN_DRIVER_API: u32 = 1;
pub(crate) const DOMAIN_RUNTIME_API: u32 = 2;
pub(crate) const DOMAIN_RESOURCE: u32 = 3;
/// `cuptiEnableAllDomains` covers these.
pub(crate) const ALL_DOMAINS: std::ops::RangeInclusive<u32> = 1..=6;

/// `CUpti_ApiCallbackSite`.
pub(crate) const SITE_ENTER: u32 = 0;
pub(crate) const SITE_EXIT: u32 = 1;

/// `CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED`.
pub(crate) const RESOURCE_GRAPHNODE_CREATED: u32 = 13;
/// `CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED`.
pub(crate) const RESOURCE_GRAPHNODE_CLONED: u32 = 14;
/// `CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED`, `..._GRAPHEXEC_DESTROY_STARTING`.
pub(crate) const RESOURCE_GRAPHEXEC_CREATED: u32 = 18;
pub(crate) const RESOURCE_GRAPHEXEC_DESTROY_STARTING: u32 = 19;

/// `CUpti_CallbackData`, written from CUPTI's documentation.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct CallbackData {
    pub callback_site: u32,
    pub function_name: *const std::ffi::c_char,
    pub function_params: *const std::ffi::c_void,
    pub function_return_value: *mut std::ffi::c_void,
    pub symbol_name: *const std::ffi::c_char,
    pub context: *mut std::ffi::c_void,
    pub context_uid: u32,
    pub correlation_data: *mut u64,
    pub correlation_id: u32,
}

/// `CUpti_ResourceData`.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct ResourceData {
    pub context: *mut std::ffi::c_void,
    pub resource_handle: *mut std::ffi::c_void,
    pub resource_descriptor: *mut std::ffi::c_void,
}

/// `CUpti_GraphData`.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct GraphData {
    pub graph: *mut std::ffi::c_void,
    pub original_graph: *mut std::ffi::c_void,
    pub node: *mut std::ffi::c_void,
    pub original_node: *mut std::ffi::c_void,
    pub node_type: u32,
    pub dependency: *mut std::ffi::c_void,
    pub graph_exec: *mut std::ffi::c_void,
}
