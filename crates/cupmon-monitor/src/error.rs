//! The monitor's errors.

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
    /// A call that does not fit the monitor's state ("no trace window is open").
    #[error("{0}")]
    State(String),
    #[error("the monitor's worker thread stopped: {0}")]
    Worker(String),
}
