//! Errors of the trace crate; each names the file and the place.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// An input that is not what the merge accepts (not JSON, wrong types, ...).
    #[error("{file}: {location}: {msg}")]
    Input {
        file: String,
        location: String,
        msg: String,
    },
    /// A window PyTorch's merge would reject (a missing field, ...).
    #[error("trace window: {0}")]
    Window(String),
    /// The merged trace would hold no duration event (PyTorch's merge raises too).
    #[error("merged trace did not contain any duration events")]
    NoDurationEvents,
    /// Writing the output failed (the path is added where it is known).
    #[error("writing the output: {0}")]
    Write(std::io::Error),
    /// Reading the dump a trace is streamed from.
    #[error(transparent)]
    Dump(#[from] cupmon_records::DumpError),
    #[error("{path}: {what}: {err}")]
    Io {
        path: PathBuf,
        what: &'static str,
        // Shown in the message, so not also a `source` (that would print it twice).
        err: std::io::Error,
    },
}

impl From<std::io::Error> for TraceError {
    fn from(err: std::io::Error) -> Self {
        TraceError::Write(err)
    }
}
