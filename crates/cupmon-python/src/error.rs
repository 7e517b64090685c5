//! Rust errors to Python exceptions, in one place. The exception classes live
//! in `cupmon/_errors.py` (so they can also derive from ValueError/OSError and
//! carry docstrings); this side only picks the error's code (from its type,
//! out of the one table `cupmon_error_code::ErrorCode`), and
//! `_errors.error_for` picks the class by that code, the same function that
//! maps the C ABI's error answers.

use std::path::Path;

use cupmon_error_code::ErrorCode;
use cupmon_records::DumpError;
use cupmon_trace::TraceError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// An error on its way to Python: `_errors.error_for(code, message, errno, filename)`.
#[derive(Debug)]
pub struct Failure {
    code: ErrorCode,
    message: String,
    errno: Option<i32>,
    filename: Option<String>,
}

impl Failure {
    pub fn new(code: ErrorCode, message: String) -> Self {
        Self {
            code,
            message,
            errno: None,
            filename: None,
        }
    }

    /// A file error. With an OS error number, `context` is all the message
    /// holds ("cannot read"): Python adds the system's text for the number
    /// and the file name, as `open()` does. Without one, the error's own text.
    fn io(context: &str, err: &std::io::Error, filename: Option<String>) -> Self {
        let errno = err.raw_os_error();
        let message = match (errno, context.is_empty()) {
            (Some(_), _) => context.to_owned(),
            (None, true) => err.to_string(),
            (None, false) => format!("{context}: {err}"),
        };
        Self {
            code: ErrorCode::Io,
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
                Self::io("", source, Some(dir.join(file).display().to_string()))
            }
            // The reader names files by their name alone: always say which
            // dump (not by searching the text for the directory, whose name
            // may be a letter that the text holds anyway).
            _ => Self::new(ErrorCode::DumpInput, format!("{}: {e}", dir.display())),
        }
    }
}

impl From<TraceError> for Failure {
    fn from(e: TraceError) -> Self {
        match &e {
            TraceError::Io { path, what, err } => {
                Self::io(what, err, Some(path.display().to_string()))
            }
            TraceError::Write(err) => Self::io("writing the output", err, None),
            TraceError::Input { .. } | TraceError::Window(_) | TraceError::NoDurationEvents => {
                Self::new(ErrorCode::TraceInput, e.to_string())
            }
            TraceError::Dump(_) => Self::new(ErrorCode::DumpInput, e.to_string()),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        Python::attach(|py| {
            let made = py
                .import("cupmon._errors")
                .and_then(|m| m.getattr("error_for"))
                .and_then(|make| make.call1((f.code.code(), &f.message, f.errno, &f.filename)));
            match made {
                Ok(exception) => PyErr::from_value(exception),
                // Only if the package itself is broken; still say what failed.
                Err(_) => PyRuntimeError::new_err(f.message),
            }
        })
    }
}

/// `_cupmon.error_codes()`: the table as this module knows it, `[(code,
/// kind, meaning)]` in code order, for the package's test that its own table
/// is the same.
#[pyfunction]
pub fn error_codes() -> Vec<(u32, &'static str, &'static str)> {
    ErrorCode::ALL
        .iter()
        .map(|c| (c.code(), c.name(), c.meaning()))
        .collect()
}
