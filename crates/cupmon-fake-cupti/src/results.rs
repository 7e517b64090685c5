//! `CUptiResult` texts for `cuptiGetResultString`/`cuptiGetErrorMessage`, and the
//! per-thread last error of `cuptiGetLastError`.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::OnceLock;

use cupmon_cupti::CuptiStatus;

/// Status texts as static C strings: (name, message).
fn texts() -> &'static HashMap<u32, (CString, CString)> {
    static TEXTS: OnceLock<HashMap<u32, (CString, CString)>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let codes = (0..=46).chain([999]).map(CuptiStatus);
        codes
            .map(|status| {
                let name = status.full_name();
                let message = match status {
                    CuptiStatus::SUCCESS => "no error".to_string(),
                    CuptiStatus::ERROR_INVALID_PARAMETER => "a parameter is not valid".into(),
                    CuptiStatus::ERROR_INVALID_OPERATION => {
                        "the operation is not valid now (are activity callbacks registered?)".into()
                    }
                    CuptiStatus::ERROR_INVALID_KIND => "the activity kind is not valid".into(),
                    CuptiStatus::ERROR_QUEUE_EMPTY => {
                        "no external correlation id is pushed for this kind".into()
                    }
                    _ => format!("fake libcupti: {name}"),
                };
                let c = |s: String| CString::new(s).expect("no NUL in status texts");
                (status.0, (c(name), c(message)))
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
pub(crate) fn report(status: CuptiStatus) -> u32 {
    if status != CuptiStatus::SUCCESS {
        LAST_ERROR.set(status.0);
    }
    status.0
}

/// The last error on this thread, reset to success.
pub(crate) fn take_last_error() -> u32 {
    LAST_ERROR.replace(0)
}
