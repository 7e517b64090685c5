//! CUPTI activity kinds (`CUpti_ActivityKind`) that cupmon decodes. The numbers are
//! CUPTI's and have not changed from 12.0 to 13.5.

use std::fmt;

/// An activity kind cupmon knows how to decode; the value is CUPTI's enum value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum ActivityKind {
    Memcpy = 1,
    Memset = 2,
    /// Serialised kernel records (same struct as `ConcurrentKernel`).
    Kernel = 3,
    Driver = 4,
    Runtime = 5,
    ConcurrentKernel = 10,
    Overhead = 17,
    CudaEvent = 36,
    Synchronization = 38,
    ExternalCorrelation = 39,
}

impl ActivityKind {
    /// Every kind cupmon decodes, in CUPTI's numeric order.
    pub const ALL: [ActivityKind; 10] = [
        Self::Memcpy,
        Self::Memset,
        Self::Kernel,
        Self::Driver,
        Self::Runtime,
        Self::ConcurrentKernel,
        Self::Overhead,
        Self::CudaEvent,
        Self::Synchronization,
        Self::ExternalCorrelation,
    ];

    /// The kind for a CUPTI enum value, if cupmon decodes it.
    pub const fn from_u32(value: u32) -> Option<Self> {
        Some(match value {
            1 => Self::Memcpy,
            2 => Self::Memset,
            3 => Self::Kernel,
            4 => Self::Driver,
            5 => Self::Runtime,
            10 => Self::ConcurrentKernel,
            17 => Self::Overhead,
            36 => Self::CudaEvent,
            38 => Self::Synchronization,
            39 => Self::ExternalCorrelation,
            _ => return None,
        })
    }

    /// CUPTI's enum value.
    pub const fn as_u32(self) -> u32 {
        self as u32
    }

    /// CUPTI's name without the `CUPTI_ACTIVITY_KIND_` prefix.
    pub const fn cupti_name(self) -> &'static str {
        match self {
            Self::Memcpy => "MEMCPY",
            Self::Memset => "MEMSET",
            Self::Kernel => "KERNEL",
            Self::Driver => "DRIVER",
            Self::Runtime => "RUNTIME",
            Self::ConcurrentKernel => "CONCURRENT_KERNEL",
            Self::Overhead => "OVERHEAD",
            Self::CudaEvent => "CUDA_EVENT",
            Self::Synchronization => "SYNCHRONIZATION",
            Self::ExternalCorrelation => "EXTERNAL_CORRELATION",
        }
    }
}

impl fmt::Display for ActivityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.cupti_name(), self.as_u32())
    }
}
