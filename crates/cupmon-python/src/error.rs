//! Rust errors to Python exceptions, in one place. The exception classes live
//! in `cupmon/_errors.py` (so they can also derive from ValueError/OSError and
//! carry docstrings); this side only names a kind, and `_errors.error_for`
//! picks the class, the same function that maps the C ABI's error kinds.

use std::path::Path;

use cupmon_records::DumpError;
use cupmon_trace::TraceError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// An error on its way to Python: `_errors.error_for(kind, message, errno, filename)`.
#[derive(Debug)]
pub struct Failure {
    kind: &'static str,
    message: String,
    errno: Option<i32>,
    filename: Option<String>,
}

impl Failure {
    fn io(message: String, err: &std::io::Error, filename: Option<String>) -> Self {
        let errno = err.raw_os_error();
        // Python prints "[Errno N]" itself.
        let message = match errno {
            Some(n) => message.replace(&format!(" (os error {n})"), ""),
            None => message,
        };
        Self {
            kind: "io",
            message,
            errno,
            filename,
        }
    }

    /// A dump error, with file names made whole (the reader names files
    /// relative to the dump directory `dir`).
    pub fn from_dump(e: DumpError, dir: &Path) -> Self {
        match &e {
            DumpError::Io { file, source } => {
                let path = dir.join(file);
                let message = format!("{}: {source}", path.display());
                Self::io(message, source, Some(path.display().to_string()))
            }
            _ => {
                let text = e.to_string();
                let dir = dir.display().to_string();
                Self {
                    kind: "dump_input",
                    message: if text.contains(&dir) {
                        text
                    } else {
                        format!("{dir}: {text}")
                    },
                    errno: None,
                    filename: None,
                }
            }
        }
    }
}

impl From<TraceError> for Failure {
    fn from(e: TraceError) -> Self {
        let message = e.to_string();
        match &e {
            TraceError::Io { path, err, .. } => {
                Self::io(message, err, Some(path.display().to_string()))
            }
            TraceError::Write(err) => Self::io(message, err, None),
            TraceError::Input { .. } | TraceError::Window(_) | TraceError::NoDurationEvents => {
                Self {
                    kind: "trace_input",
                    message,
                    errno: None,
                    filename: None,
                }
            }
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        Python::attach(|py| {
            let made = py
                .import("cupmon._errors")
                .and_then(|m| m.getattr("error_for"))
                .and_then(|make| make.call1((f.kind, &f.message, f.errno, &f.filename)));
            match made {
                Ok(exception) => PyErr::from_value(exception),
                // Only if the package itself is broken; still say what failed.
                Err(_) => PyRuntimeError::new_err(f.message),
            }
        })
    }
}
