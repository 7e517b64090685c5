//! The environment variables cupmon reads that are not settings of a session (those
//! are in [`SETTINGS`](crate::SETTINGS)): where the injection library is, test
//! stand-ins, and what launchers such as torchrun tell each process.

/// Path of the injection library (set by `cupmon run`; the Python module uses it).
pub const INJECT_LIBRARY: &str = "CUPMON_INJECT_LIBRARY";
/// Stand-in for `libcuda.so.1` in the driver check (tests only; read by cupmon-cupti).
pub const LIBCUDA: &str = "CUPMON_LIBCUDA";
/// Legacy spelling of `CUPMON_LOG=debug`.
pub const DEBUG: &str = "CUPMON_DEBUG";
/// Rank of a distributed job (torchrun); names the dump directory.
pub const RANK: &str = "RANK";
/// Rank of the process on its host (torchrun).
pub const LOCAL_RANK: &str = "LOCAL_RANK";
/// Processes in the job (torchrun).
pub const WORLD_SIZE: &str = "WORLD_SIZE";
/// Processes on this host (torchrun).
pub const LOCAL_WORLD_SIZE: &str = "LOCAL_WORLD_SIZE";

/// Set by `cupmon run` for the program it runs, a value of its own: the monitor writes
/// it into each dump's meta (`run_id`, and into a refusal's status file), so that two
/// runs into one output directory each summarise only their own processes.
pub const RUN_ID: &str = "CUPMON_RUN_ID";

/// The Python that `cupmon sql` runs DuckDB in (the pip-installed `cupmon`
/// command sets it to its own interpreter).
pub const PYTHON: &str = "CUPMON_PYTHON";

/// Names and one-line descriptions, for `--help` and the README.
pub const OTHERS: &[(&str, &str)] = &[
    (
        INJECT_LIBRARY,
        "path of libcupmon_inject.so (default: next to the cupmon binary)",
    ),
    (DEBUG, "legacy: set means CUPMON_LOG=debug"),
    (
        RUN_ID,
        "set by `cupmon run`: written into each dump's meta, so that a run lists only its own \
         processes when another writes to the same output directory",
    ),
    (
        PYTHON,
        "the Python (with the duckdb package) that `cupmon sql` runs; default python3",
    ),
    (
        LIBCUDA,
        "driver library to check for instead of libcuda.so.1 (tests)",
    ),
    (
        RANK,
        "read from torchrun: the rank names the dump directory and the trace's distributedInfo",
    ),
];
