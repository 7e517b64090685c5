//! The monitor's errors.

use std::path::PathBuf;

use cupmon_cupti::{CuptiError, LoadError};
use cupmon_records::DumpError;

#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// No driver, no libcupti, or a libcupti that does not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Cupti(#[from] CuptiError),
    #[error(transparent)]
    Dump(#[from] DumpError),
    /// A setting that cannot be used (named, with what is allowed).
    #[error(transparent)]
    Setting(#[from] cupmon_config::ConfigError),
    /// A request that cannot be served as asked ("push_annotation needs a name").
    #[error("bad request: {0}")]
    Config(String),
    /// A call that does not fit the monitor's state.
    #[error(transparent)]
    State(#[from] StateError),
    #[error("the monitor's worker thread stopped: {0}")]
    Worker(String),
}

/// A call that does not fit the state of the monitor (or of the process's
/// monitoring session). One variant per case, so that callers, the C ABI
/// and through it Python, tell them apart by type, never by message text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error(
        "cupmon is not monitoring this process (start it with cupmon run or start_collection)"
    )]
    NotMonitoring,
    #[error("cupmon is already monitoring this process (dump in {})", dump_dir.display())]
    AlreadyMonitoring { dump_dir: PathBuf },
    #[error("the monitor is already stopped")]
    Stopped,
    #[error("a trace window is already open")]
    WindowAlreadyOpen,
    #[error("a trace window is already prepared")]
    WindowAlreadyPrepared,
    #[error("the window was not prepared")]
    WindowNotPrepared,
    #[error("no trace window is open")]
    NoWindowOpen,
    #[error("no user annotation to pop")]
    NoAnnotationOpen,
    /// Python stacks asked for where the launch callbacks cannot note them.
    #[error("the Python stacks of launches cannot be noted in this process: {why}")]
    NoPythonStacks { why: String },
}
