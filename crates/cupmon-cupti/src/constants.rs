//! CUPTI's enumerations that only the FFI side needs, as Rust newtypes (the
//! activity-kind vocabulary lives in cupmon-records). The numbers are CUPTI's ABI
//! (stable across 12.x and 13.x); the names are CUPTI's without the common prefix.

use cupmon_records::c_enum;
pub use cupmon_records::{ActivityKind, ExternalCorrelationKind};

c_enum! {
    /// `CUpti_ActivityThreadIdType`: SYSTEM makes API records carry OS thread ids
    /// (`gettid`), which is what Kineto's CPU traces use; DEFAULT is `pthread_self`.
    ThreadIdType {
        DEFAULT = 0,
        SYSTEM = 1,
    }
}

c_enum! {
    /// `CUpti_ActivityFlag` values accepted by `cuptiActivityFlushAll`.
    FlushFlag {
        NONE = 0,
        FORCED = 1,
    }
}

c_enum! {
    /// `CUptiResult`.
    CuptiStatus {
        SUCCESS = 0,
        ERROR_INVALID_PARAMETER = 1,
        ERROR_INVALID_DEVICE = 2,
        ERROR_INVALID_CONTEXT = 3,
        ERROR_INVALID_EVENT_DOMAIN_ID = 4,
        ERROR_INVALID_EVENT_ID = 5,
        ERROR_INVALID_EVENT_NAME = 6,
        ERROR_INVALID_OPERATION = 7,
        ERROR_OUT_OF_MEMORY = 8,
        ERROR_HARDWARE = 9,
        ERROR_PARAMETER_SIZE_NOT_SUFFICIENT = 10,
        ERROR_API_NOT_IMPLEMENTED = 11,
        ERROR_MAX_LIMIT_REACHED = 12,
        ERROR_NOT_READY = 13,
        ERROR_NOT_COMPATIBLE = 14,
        ERROR_NOT_INITIALIZED = 15,
        ERROR_INVALID_METRIC_ID = 16,
        ERROR_INVALID_METRIC_NAME = 17,
        ERROR_QUEUE_EMPTY = 18,
        ERROR_INVALID_HANDLE = 19,
        ERROR_INVALID_STREAM = 20,
        ERROR_INVALID_KIND = 21,
        ERROR_INVALID_EVENT_VALUE = 22,
        ERROR_DISABLED = 23,
        ERROR_INVALID_MODULE = 24,
        ERROR_INVALID_METRIC_VALUE = 25,
        ERROR_HARDWARE_BUSY = 26,
        ERROR_NOT_SUPPORTED = 27,
        ERROR_UM_PROFILING_NOT_SUPPORTED = 28,
        ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE = 29,
        ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES = 30,
        ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS = 31,
        ERROR_CDP_TRACING_NOT_SUPPORTED = 32,
        ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED = 33,
        ERROR_CUDA_COMPILER_NOT_COMPATIBLE = 34,
        ERROR_INSUFFICIENT_PRIVILEGES = 35,
        ERROR_OLD_PROFILER_API_INITIALIZED = 36,
        ERROR_OPENACC_UNDEFINED_ROUTINE = 37,
        ERROR_LEGACY_PROFILER_NOT_SUPPORTED = 38,
        ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
        ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES = 40,
        ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED = 41,
        ERROR_CMP_DEVICE_NOT_SUPPORTED = 42,
        ERROR_MIG_DEVICE_NOT_SUPPORTED = 43,
        ERROR_SLI_DEVICE_NOT_SUPPORTED = 44,
        ERROR_WSL_DEVICE_NOT_SUPPORTED = 45,
        ERROR_INVALID_CHIP_NAME = 46,
        ERROR_UNKNOWN = 999,
    }
}

impl CuptiStatus {
    /// CUPTI's full enumerator name (`CUPTI_ERROR_NOT_INITIALIZED`), or a
    /// placeholder naming the number for values newer than this table.
    pub fn full_name(self) -> String {
        match self.name() {
            Some(name) => format!("CUPTI_{name}"),
            None => format!("CUPTI status {}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_cupti() {
        assert_eq!(
            CuptiStatus::ERROR_NOT_INITIALIZED.full_name(),
            "CUPTI_ERROR_NOT_INITIALIZED"
        );
    }
}
