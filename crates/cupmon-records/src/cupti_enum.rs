//! CUPTI's enumerations as `u32` newtypes: the numbers are CUPTI's ABI (stable across
//! 12.x and 13.x), the names CUPTI's without the common prefix. Values CUPTI adds later
//! stay representable (they just have no name here).

/// Declares a `u32` newtype with named constants and a `name()` lookup.
#[macro_export]
macro_rules! c_enum {
    ($(#[$meta:meta])* $ty:ident { $($name:ident = $value:expr,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty(pub u32);

        #[allow(missing_docs)]
        impl $ty {
            $(pub const $name: Self = Self($value);)*

            /// CUPTI's name for this value without its prefix, if it is one cupmon knows.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(stringify!($name)),)*
                    _ => None,
                }
            }

            /// The value whose name is `name` (without the prefix; any case).
            pub fn from_name(name: &str) -> Option<Self> {
                $(if name.eq_ignore_ascii_case(stringify!($name)) {
                    return Some(Self::$name);
                })*
                None
            }
        }

        impl ::std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.name() {
                    Some(name) => write!(f, "{}({})", name, self.0),
                    None => write!(f, "{}({})", stringify!($ty), self.0),
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{}", self.0),
                }
            }
        }
    };
}

c_enum! {
    /// `CUpti_ActivityKind`: what a record is. cupmon decodes the kinds that have a
    /// file under `kinds/` ([`ActivityKind::decodable`]).
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

impl ActivityKind {
    /// Kind numbers are small; tables indexed by kind have this many slots.
    pub const SLOTS: usize = 64;

    /// CUPTI's enum value.
    pub const fn as_u32(self) -> u32 {
        self.0
    }

    /// CUPTI's name, or the number for a kind newer than this table.
    pub fn cupti_name(self) -> std::borrow::Cow<'static, str> {
        match self.name() {
            Some(n) => n.into(),
            None => self.0.to_string().into(),
        }
    }

    /// `CONCURRENT_KERNEL`, `memcpy`, `2` or `CUPTI_ACTIVITY_KIND_MEMSET` -> the kind.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        if let Ok(n) = t.parse::<u32>() {
            return Some(Self(n));
        }
        let t = t
            .strip_prefix("CUPTI_ACTIVITY_KIND_")
            .or_else(|| t.strip_prefix("cupti_activity_kind_"))
            .unwrap_or(t);
        Self::from_name(t)
    }

    /// Whether cupmon can decode records of this kind.
    pub fn decodable(self) -> bool {
        crate::kinds::family_of(self).is_some()
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
        assert_eq!(format!("{:?}", ActivityKind::MEMSET), "MEMSET(2)");
        assert_eq!(ExternalCorrelationKind::CUSTOM1.0, 4);
    }

    #[test]
    fn parses_names_numbers_and_prefixes() {
        assert_eq!(ActivityKind::parse("memcpy"), Some(ActivityKind::MEMCPY));
        assert_eq!(ActivityKind::parse(" 2 "), Some(ActivityKind::MEMSET));
        assert_eq!(
            ActivityKind::parse("CUPTI_ACTIVITY_KIND_MEMORY2"),
            Some(ActivityKind::MEMORY2)
        );
        assert_eq!(ActivityKind::parse("NOPE"), None);
    }
}
