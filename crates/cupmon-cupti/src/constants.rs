//! CUPTI's enumerations as Rust newtypes. The numbers are CUPTI's ABI (stable
//! across 12.x and 13.x); the names are CUPTI's without the common prefix.

use std::fmt;

/// Declares a `u32` newtype with named constants and a `name()` lookup.
macro_rules! c_enum {
    ($(#[$meta:meta])* $ty:ident { $($name:ident = $value:expr,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty(pub u32);

        #[allow(missing_docs)]
        impl $ty {
            $(pub const $name: Self = Self($value);)*

            /// CUPTI's name for this value without its prefix, if it is one CUPTI 13.0 knows.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(stringify!($name)),)*
                    _ => None,
                }
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(name) => write!(f, "{}({})", name, self.0),
                    None => write!(f, "{}({})", stringify!($ty), self.0),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{}", self.0),
                }
            }
        }
    };
}

c_enum! {
    /// `CUpti_ActivityKind`.
    ActivityKind {
        INVALID = 0,
        MEMCPY = 1,
        MEMSET = 2,
        KERNEL = 3,
        DRIVER = 4,
        RUNTIME = 5,
        EVENT = 6,
        METRIC = 7,
        DEVICE = 8,
        CONTEXT = 9,
        CONCURRENT_KERNEL = 10,
        NAME = 11,
        MARKER = 12,
        MARKER_DATA = 13,
        SOURCE_LOCATOR = 14,
        GLOBAL_ACCESS = 15,
        BRANCH = 16,
        OVERHEAD = 17,
        CDP_KERNEL = 18,
        PREEMPTION = 19,
        ENVIRONMENT = 20,
        EVENT_INSTANCE = 21,
        MEMCPY2 = 22,
        METRIC_INSTANCE = 23,
        INSTRUCTION_EXECUTION = 24,
        UNIFIED_MEMORY_COUNTER = 25,
        FUNCTION = 26,
        MODULE = 27,
        DEVICE_ATTRIBUTE = 28,
        SHARED_ACCESS = 29,
        PC_SAMPLING = 30,
        PC_SAMPLING_RECORD_INFO = 31,
        INSTRUCTION_CORRELATION = 32,
        OPENACC_DATA = 33,
        OPENACC_LAUNCH = 34,
        OPENACC_OTHER = 35,
        CUDA_EVENT = 36,
        STREAM = 37,
        SYNCHRONIZATION = 38,
        EXTERNAL_CORRELATION = 39,
        NVLINK = 40,
        INSTANTANEOUS_EVENT = 41,
        INSTANTANEOUS_EVENT_INSTANCE = 42,
        INSTANTANEOUS_METRIC = 43,
        INSTANTANEOUS_METRIC_INSTANCE = 44,
        MEMORY = 45,
        PCIE = 46,
        OPENMP = 47,
        INTERNAL_LAUNCH_API = 48,
        MEMORY2 = 49,
        MEMORY_POOL = 50,
        GRAPH_TRACE = 51,
        JIT = 52,
        DEVICE_GRAPH_TRACE = 53,
        MEM_DECOMPRESS = 54,
    }
}

c_enum! {
    /// `CUpti_ExternalCorrelationKind`. Kineto uses CUSTOM0 for operators and
    /// CUSTOM1 for user annotations; cupmon's annotations use CUSTOM1 too.
    ExternalCorrelationKind {
        INVALID = 0,
        UNKNOWN = 1,
        OPENACC = 2,
        CUSTOM0 = 3,
        CUSTOM1 = 4,
        CUSTOM2 = 5,
    }
}

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

/// CUPTI's callback ids (`CUpti_CallbackId`) for the API calls the fake library
/// generates and cupmon's filters name. CUPTI 13.0 numbering.
pub mod cbid {
    /// `CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020`.
    pub const RUNTIME_MEMCPY_ASYNC: u32 = 41;
    /// `CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020`.
    pub const RUNTIME_MEMSET_ASYNC: u32 = 51;
    /// `CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000`.
    pub const RUNTIME_LAUNCH_KERNEL: u32 = 211;
    /// `CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel`.
    pub const DRIVER_LAUNCH_KERNEL: u32 = 307;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_cupti() {
        assert_eq!(ActivityKind::CONCURRENT_KERNEL.0, 10);
        assert_eq!(
            ActivityKind::CONCURRENT_KERNEL.name(),
            Some("CONCURRENT_KERNEL")
        );
        assert_eq!(ActivityKind(999).name(), None);
        assert_eq!(ActivityKind(999).to_string(), "999");
        assert_eq!(ExternalCorrelationKind::CUSTOM1.0, 4);
        assert_eq!(
            CuptiStatus::ERROR_NOT_INITIALIZED.full_name(),
            "CUPTI_ERROR_NOT_INITIALIZED"
        );
        assert_eq!(format!("{:?}", ActivityKind::MEMSET), "MEMSET(2)");
    }
}
