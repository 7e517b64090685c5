//! Errors: loading libcupti ([`LoadError`]) and CUPTI calls ([`CuptiError`]).

use std::fmt;
use std::path::PathBuf;

use crate::constants::CuptiStatus;
use crate::env_vars;

/// A CUPTI call that did not return `CUPTI_SUCCESS`.
///
/// Displays as `cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_INITIALIZED (15): <message>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct CuptiError {
    /// The CUPTI function, e.g. `cuptiActivityEnable`.
    pub function: &'static str,
    /// The interesting argument, already formatted (an activity kind, a cbid), if any.
    pub argument: Option<String>,
    pub status: CuptiStatus,
    /// `cuptiGetResultString`'s text, or cupmon's own name for the status when
    /// CUPTI could not give one.
    pub status_text: String,
    /// `cuptiGetErrorMessage`'s longer explanation, when this libcupti has it.
    pub message: Option<String>,
}

impl fmt::Display for CuptiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.function)?;
        if let Some(argument) = &self.argument {
            f.write_str(argument)?;
        }
        write!(f, "): {} ({})", self.status_text, self.status.0)?;
        match &self.message {
            Some(message) if message != &self.status_text => write!(f, ": {message}"),
            _ => Ok(()),
        }
    }
}

/// One place the loader looked for libcupti, and why it was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tried {
    /// A file, or a directory pattern such as `/usr/local/cuda-13.0/lib64/libcupti.so*`.
    pub path: PathBuf,
    pub outcome: String,
}

impl fmt::Display for Tried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.outcome)
    }
}

/// Why libcupti could not be made ready for use.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The NVIDIA driver library does not load, so CUPTI must not be called (CUPTI
    /// 13.2 crashes on its first call without a driver).
    #[error("no NVIDIA driver found (libcuda.so.1 could not be loaded: {detail})")]
    NoDriver { detail: String },

    #[error(
        "libcupti not found; set {var}=/path/to/libcupti.so or CUDA_HOME. Tried:\n{}",
        list(.tried),
        var = env_vars::CUPMON_LIBCUPTI
    )]
    NotFound { tried: Vec<Tried> },

    /// The library named by `CUPMON_LIBCUPTI` does not load (no fallback to a search:
    /// an explicit choice that fails should be fixed, not silently replaced).
    #[error("{path} (from {var}) could not be loaded: {detail}", path = .path.display(), var = env_vars::CUPMON_LIBCUPTI)]
    ExplicitLibrary { path: PathBuf, detail: String },

    /// A libcupti whose version cupmon has no record layouts for: its records would
    /// be misread (CUPTI packs them with no size field), so it is not used at all.
    #[error(
        "{path}{file}: {source}. cupmon does not monitor with this libcupti; set \
         {var}=/path/to/libcupti.so (or --libcupti) to a supported one, such as the \
         nvidia-cuda-cupti wheel's nvidia/cu13/lib/libcupti.so.13 or \
         nvidia-cuda-cupti-cu12's nvidia/cuda_cupti/lib/libcupti.so.12",
        path = .path.display(),
        file = real_file(.path),
        var = env_vars::CUPMON_LIBCUPTI
    )]
    UnsupportedVersion {
        path: PathBuf,
        #[source]
        source: cupmon_records::UnsupportedVersion,
    },

    #[error(transparent)]
    Cupti(#[from] CuptiError),
}

/// ` (file libcupti.so.2025.4.0)` when `path` is a link to a file of another name
/// (a toolkit's `libcupti.so` names its version only in the file it points to).
fn real_file(path: &std::path::Path) -> String {
    match (std::fs::canonicalize(path), path.file_name()) {
        (Ok(real), Some(name)) if real.file_name() != Some(name) => {
            format!(" (file {})", real.display())
        }
        _ => String::new(),
    }
}

fn list(tried: &[Tried]) -> String {
    let lines: Vec<String> = tried.iter().map(|t| format!("  {t}")).collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cupti_error_names_call_status_and_text() {
        let error = CuptiError {
            function: "cuptiActivityEnable",
            argument: Some("CONCURRENT_KERNEL".into()),
            status: CuptiStatus::ERROR_NOT_INITIALIZED,
            status_text: "CUPTI_ERROR_NOT_INITIALIZED".into(),
            message: Some("CUPTI is not initialized".into()),
        };
        assert_eq!(
            error.to_string(),
            "cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_INITIALIZED (15): CUPTI is not initialized"
        );
    }

    #[test]
    fn not_found_lists_every_path() {
        let error = LoadError::NotFound {
            tried: vec![
                Tried {
                    path: "/a/libcupti.so*".into(),
                    outcome: "no match".into(),
                },
                Tried {
                    path: "/b/libcupti.so.13".into(),
                    outcome: "bad ELF".into(),
                },
            ],
        };
        let text = error.to_string();
        assert!(
            text.contains("  /a/libcupti.so*: no match\n  /b/libcupti.so.13: bad ELF"),
            "{text}"
        );
    }
}
