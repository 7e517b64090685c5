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
