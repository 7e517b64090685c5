//! `CUptiResult` texts for `cuptiGetResultString`/`cuptiGetErrorMessage`, and the
//! per-thread last error of `cuptiGetLastError`.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::OnceLock;

use crate::cupti_types::Status;

/// Status texts as static C strings: (CUPTI's name, a message), for the
/// statuses the fake returns.
fn texts() -> &'static HashMap<u32, (CString, CString)> {
    static TEXTS: OnceLock<HashMap<u32, (CString, CString)>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        [
            (Status::SUCCESS, "no error"),
            (Status::ERROR_INVALID_PARAMETER, "a parameter is not valid"),
            (
                Status::ERROR_INVALID_OPERATION,
                "the operation is not valid now (are activity callbacks registered?)",
            ),
            (
                Status::ERROR_QUEUE_EMPTY,
                "no external correlation id is pushed for this kind",
            ),
            (Status::ERROR_INVALID_KIND, "the activity kind is not valid"),
            (
                Status::ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                "a callback subscriber is already registered",
            ),
        ]
        .into_iter()
        .map(|(status, message)| {
            let name = format!("CUPTI_{}", status.name().expect("a named status"));
            let c = |s: String| CString::new(s).expect("no NUL in status texts");
            (status.0, (c(name), c(message.to_owned())))
        })
        .collect()
    })
}

pub(crate) fn name(status: u32) -> Option<&'static CStr> {
    texts().get(&status).map(|(name, _)| name.as_c_str())
}

pub(crate) fn message(status: u32) -> Option<&'static CStr> {
    texts().get(&status).map(|(_, message)| message.as_c_str())
}

thread_local! {
    static LAST_ERROR: Cell<u32> = const { Cell::new(0) };
}

/// Returns `status`, remembering it as this thread's last error when it is one.
pub(crate) fn report(status: Status) -> u32 {
    if status != Status::SUCCESS {
        LAST_ERROR.set(status.0);
    }
    status.0
}

/// The last error on this thread, reset to success.
pub(crate) fn take_last_error() -> u32 {
    LAST_ERROR.replace(0)
}
