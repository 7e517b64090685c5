//! Why an analysis cannot be made.

use std::path::PathBuf;

/// Why an analysis cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum StragglerError {
    #[error("{}: {err}", dir.display())]
    Dump {
        dir: PathBuf,
        #[source]
        err: cupmon_records::DumpError,
    },
    #[error("a period must be longer than 0")]
    ZeroPeriod,
}
