//! The kinds of error that cross from cupmon's Rust code into Python, each
//! with a stable integer code and name.
//!
//! Two producers use this one table: the injection library's C ABI
//! (`cupmon_call`, every error answer carries `{"code", "kind", "message"}`)
//! and the extension module `cupmon._cupmon` (the offline merge, export and
//! dump reader). The Python package maps codes to exception classes
//! (`python/cupmon/_errors.py`) and never looks at message text; its tests
//! check that its table is exactly this one, as both producers report it
//! (the ABI's `error_codes` op, `_cupmon.error_codes()`).
//!
//! Codes are a wire format: a code once given is never reused or renumbered
//! (the test below pins them). A new kind takes a new number; Python maps a
//! code it does not know to its most general monitor error.

macro_rules! error_codes {
    ($($name:ident = $code:literal : $meaning:literal,)*) => {
        /// A kind of error, as Python sees it. See the crate documentation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum ErrorCode {
            $(#[doc = $meaning] $name = $code,)*
        }

        impl ErrorCode {
            /// Every kind, in code order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$name,)*];

            /// The kind's name on the wire (`"WindowAlreadyOpen"`); Python's
            /// `ErrorCode` member of the same value has the same name.
            pub const fn name(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => stringify!($name),)*
                }
            }

            /// What the kind means, in a few words (for the table's readers).
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(ErrorCode::$name => $meaning,)*
                }
            }

            /// The kind of a code, if the code is one of this table's.
            pub const fn from_code(code: u32) -> Option<ErrorCode> {
                match code {
                    $($code => Some(ErrorCode::$name),)*
                    _ => None,
                }
            }
        }
    };
}

// Grouped by tens: requests and internal faults, loading and CUPTI, the
// monitor's state, the offline inputs.
error_codes! {
    Internal = 1: "a fault inside cupmon (a panic, the worker thread gone)",
    BadRequest = 2: "a request the C ABI cannot read (not JSON, no or unknown op, a missing argument)",
    InvalidSetting = 3: "a setting with a value cupmon does not accept (a kind, a size, a period)",
    NoDriver = 10: "no NVIDIA driver (libcuda.so.1) in this process",
    NoCupti = 11: "no libcupti found, or it cannot be loaded",
    Cupti = 12: "a CUPTI call failed",
    DumpWrite = 13: "writing the raw dump failed",
    NotMonitoring = 20: "no monitor runs in this process",
    AlreadyMonitoring = 21: "a monitor already runs in this process",
    MonitorStopped = 22: "the monitor has stopped",
    WindowAlreadyOpen = 23: "a trace window is already open",
    WindowAlreadyPrepared = 24: "a trace window is already prepared",
    WindowNotPrepared = 25: "the trace window was not prepared",
    NoWindowOpen = 26: "no trace window is open",
    NoAnnotationOpen = 27: "no user annotation to pop on this thread",
    NoPythonStacks = 28: "the Python stacks of launches cannot be noted in this process",
    TraceInput = 30: "a CPU trace or trace window the merge or export cannot use",
    DumpInput = 31: "a raw dump directory that cannot be decoded",
    Io = 32: "a file that cannot be read or written",
}

impl ErrorCode {
    /// The integer on the wire.
    pub const fn code(self) -> u32 {
        self as u32
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;
    use std::collections::BTreeSet;

    /// The wire format, pinned: changing a number or a name here breaks every
    /// Python package built against an older library (and the reverse).
    const PINNED: &[(u32, &str)] = &[
        (1, "Internal"),
        (2, "BadRequest"),
        (3, "InvalidSetting"),
        (10, "NoDriver"),
        (11, "NoCupti"),
        (12, "Cupti"),
        (13, "DumpWrite"),
        (20, "NotMonitoring"),
        (21, "AlreadyMonitoring"),
        (22, "MonitorStopped"),
        (23, "WindowAlreadyOpen"),
        (24, "WindowAlreadyPrepared"),
        (25, "WindowNotPrepared"),
        (26, "NoWindowOpen"),
        (27, "NoAnnotationOpen"),
        (28, "NoPythonStacks"),
        (30, "TraceInput"),
        (31, "DumpInput"),
        (32, "Io"),
    ];

    #[test]
    fn codes_and_names_are_the_pinned_ones() {
        let table: Vec<(u32, &str)> = ErrorCode::ALL
            .iter()
            .map(|c| (c.code(), c.name()))
            .collect();
        assert_eq!(table, PINNED);
    }

    #[test]
    fn codes_and_names_are_unique_and_zero_is_no_code() {
        let codes: BTreeSet<u32> = ErrorCode::ALL.iter().map(|c| c.code()).collect();
        let names: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(codes.len(), ErrorCode::ALL.len());
        assert_eq!(names.len(), ErrorCode::ALL.len());
        assert!(!codes.contains(&0), "0 is what a missing code reads as");
        assert_eq!(ErrorCode::from_code(0), None);
    }

    #[test]
    fn from_code_inverts_code() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(c.code()), Some(c));
            assert!(!c.meaning().is_empty());
        }
        assert_eq!(ErrorCode::from_code(4), None);
        assert_eq!(
            ErrorCode::WindowAlreadyOpen.to_string(),
            "WindowAlreadyOpen (23)"
        );
    }
}
