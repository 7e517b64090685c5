//! The C ABI's error answers: every failure becomes an [`ErrorCode`] (chosen
//! here, from the error's type) and a message for humans. Python picks the
//! exception by the code alone.

use cupmon_cupti::LoadError;
use cupmon_error_code::ErrorCode;
use cupmon_monitor::{MonitorError, StateError};
use serde_json::{json, Value};

/// A failed request: `{"code", "kind", "message"}` on the wire.
#[derive(Debug)]
pub(crate) struct AbiError {
    pub code: ErrorCode,
    pub message: String,
}

impl AbiError {
    /// A request the ABI cannot read: the caller's mistake, not the monitor's.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::BadRequest,
            message: message.into(),
        }
    }

    /// A setting with a value cupmon does not accept.
    pub fn invalid_setting(message: impl Into<String>) -> Self {
        Self {
            code: ErrorCode::InvalidSetting,
            message: message.into(),
        }
    }

    /// A panic caught at the C boundary.
    pub fn panicked() -> Self {
        Self {
            code: ErrorCode::Internal,
            message: "internal error (a panic in cupmon)".into(),
        }
    }

    /// The whole answer: `{"ok": false, "error": {...}}`.
    pub fn answer(&self) -> Value {
        json!({
            "ok": false,
            "error": {
                "code": self.code.code(),
                "kind": self.code.name(),
                "message": self.message,
            },
        })
    }
}

impl From<MonitorError> for AbiError {
    fn from(e: MonitorError) -> Self {
        Self {
            code: code_of(&e),
            message: e.to_string(),
        }
    }
}

impl From<cupmon_monitor::ConfigError> for AbiError {
    fn from(e: cupmon_monitor::ConfigError) -> Self {
        Self::invalid_setting(e.to_string())
    }
}

impl From<StateError> for AbiError {
    fn from(e: StateError) -> Self {
        MonitorError::from(e).into()
    }
}

/// The code of a monitor error. Exhaustive on purpose: a new variant of
/// `MonitorError` or `StateError` does not compile until it has a code.
pub(crate) fn code_of(e: &MonitorError) -> ErrorCode {
    match e {
        MonitorError::Load(LoadError::NoDriver { .. }) => ErrorCode::NoDriver,
        MonitorError::Load(_) => ErrorCode::NoCupti,
        MonitorError::Cupti(_) => ErrorCode::Cupti,
        MonitorError::Dump(_) => ErrorCode::DumpWrite,
        MonitorError::Config(_) | MonitorError::Setting(_) => ErrorCode::InvalidSetting,
        MonitorError::Worker(_) => ErrorCode::Internal,
        MonitorError::State(state) => match state {
            StateError::NotMonitoring => ErrorCode::NotMonitoring,
            StateError::AlreadyMonitoring { .. } => ErrorCode::AlreadyMonitoring,
            StateError::Stopped => ErrorCode::MonitorStopped,
            StateError::WindowAlreadyOpen => ErrorCode::WindowAlreadyOpen,
            StateError::WindowAlreadyPrepared => ErrorCode::WindowAlreadyPrepared,
            StateError::WindowNotPrepared => ErrorCode::WindowNotPrepared,
            StateError::NoWindowOpen => ErrorCode::NoWindowOpen,
            StateError::NoAnnotationOpen => ErrorCode::NoAnnotationOpen,
            StateError::NoPythonStacks { .. } => ErrorCode::NoPythonStacks,
        },
    }
}

/// The answer to the `error_codes` op: the whole table, in code order, so
/// that the Python package can check its own against it.
pub(crate) fn error_code_table() -> Value {
    ErrorCode::ALL
        .iter()
        .map(|c| json!({"code": c.code(), "kind": c.name(), "meaning": c.meaning()}))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn each_state_has_its_own_code() {
        let states = [
            StateError::NotMonitoring,
            StateError::AlreadyMonitoring {
                dump_dir: PathBuf::from("/d"),
            },
            StateError::Stopped,
            StateError::WindowAlreadyOpen,
            StateError::WindowAlreadyPrepared,
            StateError::WindowNotPrepared,
            StateError::NoWindowOpen,
            StateError::NoAnnotationOpen,
            StateError::NoPythonStacks {
                why: "no CPython".into(),
            },
        ];
        let codes: std::collections::BTreeSet<ErrorCode> = states
            .into_iter()
            .map(|s| code_of(&MonitorError::State(s)))
            .collect();
        assert_eq!(codes.len(), 9, "{codes:?}");
    }

    #[test]
    fn an_error_answer_carries_code_kind_and_message() {
        let e = AbiError::from(MonitorError::from(StateError::NoWindowOpen));
        assert_eq!(
            e.answer(),
            json!({"ok": false, "error": {
                "code": 26, "kind": "NoWindowOpen", "message": "no trace window is open",
            }})
        );
        let load = MonitorError::Load(LoadError::NoDriver {
            detail: "libcuda.so.1: not found".into(),
        });
        assert_eq!(code_of(&load), ErrorCode::NoDriver);
        assert_eq!(
            code_of(&MonitorError::Config("x".into())),
            ErrorCode::InvalidSetting
        );
    }

    #[test]
    fn the_table_lists_every_code_once() {
        let table = error_code_table();
        let rows = table.as_array().expect("a list");
        assert_eq!(rows.len(), ErrorCode::ALL.len());
        for (row, code) in rows.iter().zip(ErrorCode::ALL) {
            assert_eq!(row["code"], code.code());
            assert_eq!(row["kind"], code.name());
        }
    }
}
