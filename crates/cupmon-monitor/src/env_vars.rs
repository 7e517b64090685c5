//! Every environment variable cupmon reads, in one place. `cupmon run` sets
//! them for the traced program; the injection library and the Python module
//! read them.

/// Directory for the dumps (one subdirectory per process). Default `cupmon-out`.
pub const OUTPUT_DIR: &str = "CUPMON_OUTPUT_DIR";
/// Always-on activity kinds, as CUPTI names or numbers separated by commas
/// (default `CONCURRENT_KERNEL,MEMCPY,MEMSET`).
pub const KINDS: &str = "CUPMON_KINDS";
/// Activity buffer size in bytes, or with a `K`/`M` suffix (default 4M).
pub const BUFFER_SIZE: &str = "CUPMON_BUFFER_SIZE";
/// Most memory lent to CUPTI or waiting to be written, same units (default 256M).
pub const MAX_OUTSTANDING: &str = "CUPMON_MAX_OUTSTANDING";
/// Seconds between periodic flushes (default 1).
pub const FLUSH_PERIOD: &str = "CUPMON_FLUSH_PERIOD";
/// Open a trace window this many seconds after the monitor starts.
pub const WINDOW_AT: &str = "CUPMON_WINDOW_AT";
/// Keep that window open this many seconds (it also closes at exit).
pub const WINDOW_FOR: &str = "CUPMON_WINDOW_FOR";
/// `1`: SIGUSR2 opens a trace window, the next SIGUSR2 closes it.
pub const WINDOW_ON_SIGNAL: &str = "CUPMON_WINDOW_ON_SIGNAL";
/// `0` turns the injection library off (for a child that must not be traced).
pub const ENABLE: &str = "CUPMON_ENABLE";
/// Path of the injection library (set by `cupmon run`; the Python module uses it).
pub const INJECT_LIBRARY: &str = "CUPMON_INJECT_LIBRARY";
/// Path of libcupti to use instead of searching (read by cupmon-cupti).
pub const LIBCUPTI: &str = cupmon_cupti::env_vars::CUPMON_LIBCUPTI;
/// Stand-in for `libcuda.so.1` in the driver check (tests only; read by cupmon-cupti).
pub const LIBCUDA: &str = cupmon_cupti::env_vars::CUPMON_LIBCUDA;
/// Set to print diagnostics of trace windows on stderr.
pub const DEBUG: &str = "CUPMON_DEBUG";
/// Rank of a distributed job (set by torchrun); names the dump directory.
pub const RANK: &str = "RANK";

/// Names and one-line descriptions, for `--help` and the README.
pub const ALL: &[(&str, &str)] = &[
    (OUTPUT_DIR, "dump directory (one subdirectory per process)"),
    (
        KINDS,
        "always-on CUPTI activity kinds (default CONCURRENT_KERNEL,MEMCPY,MEMSET)",
    ),
    (BUFFER_SIZE, "activity buffer size (default 4M)"),
    (
        MAX_OUTSTANDING,
        "cap on buffer memory; beyond it records are dropped and counted (default 256M)",
    ),
    (
        FLUSH_PERIOD,
        "seconds between flushes to the dump (default 1)",
    ),
    (
        WINDOW_AT,
        "open a trace window this many seconds after start",
    ),
    (WINDOW_FOR, "keep it open this many seconds"),
    (WINDOW_ON_SIGNAL, "1: SIGUSR2 toggles a trace window"),
    (ENABLE, "0: do not monitor this process"),
    (
        INJECT_LIBRARY,
        "path of libcupmon_inject.so (set by cupmon run)",
    ),
    (LIBCUPTI, "libcupti to load instead of searching for one"),
    (DEBUG, "set: print trace-window diagnostics on stderr"),
    (
        LIBCUDA,
        "driver library to check for instead of libcuda.so.1 (tests)",
    ),
];
