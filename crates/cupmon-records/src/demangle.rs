//! Kernel-name demangling: libstdc++'s `__cxa_demangle` with Kineto's rules (names over
//! 1024 bytes and names it rejects stay as they are), so names equal torch.profiler's.
//! The FFI lives in the `cupmon-demangle` crate.

pub use cupmon_demangle::demangle;
