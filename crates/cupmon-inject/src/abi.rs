//! The C ABI to the process's monitor: one JSON request in, one JSON answer
//! out, so that callers (the Python module through ctypes, tools) need one
//! symbol and the ABI can grow without breaking them.
//!
//! Request: `{"op": "<name>", ...}`, one of `cupmon_abi::Request` (the enum the
//! Python extension module encodes requests with). Answer: `{"ok": true, "result": ...}` or
//! `{"ok": false, "error": {"code": N, "kind": "<Name>", "message": "..."}}`,
//! where the code and its name come from one table, `cupmon_error_code::ErrorCode`
//! (callers choose what to do by the code; the message is for humans). Ops:
//! `version`, `error_codes` (the table), `status`, `start` (`output_dir`,
//! and any setting of cupmon-config's table by name, e.g. `buffer_size`: "8MiB"),
//! `stop`, `stats`, `flush` (`forced`), `prepare_window`, `start_window`
//! (`withhold_api_from_clients`), `end_window`, `push_annotation` (`name`),
//! `pop_annotation`, `rearm`, `step` (a program step: counts it, and closes a window
//! opened by `cupmon window --steps N` after N of them), `python_stacks` (`on`: note
//! each launch's Python stack from now on, or stop; answers `{"was_on": bool}`).

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use std::collections::BTreeMap;

use cupmon_abi::Request;
use cupmon_monitor::{MonitorConfig, StateError};
use serde_json::{json, Value};

use crate::abi_error::{error_code_table, AbiError};
use crate::session::with;

/// Version of this ABI; bumped when an op or the answer's shape changes
/// incompatibly (2: errors as `{"code", "kind", "message"}`).
pub const ABI_VERSION: u32 = 2;

/// Handle one request (also usable from Rust, e.g. in tests).
pub fn call(request: &str) -> Value {
    let answer = Request::from_json(request)
        .map_err(|e| AbiError::bad_request(e.0))
        .and_then(dispatch);
    match answer {
        Ok(result) => json!({"ok": true, "result": result}),
        Err(e) => e.answer(),
    }
}

fn dispatch(req: Request) -> Result<Value, AbiError> {
    match req {
        Request::Version => Ok(json!({"abi": ABI_VERSION, "cupmon": env!("CARGO_PKG_VERSION")})),
        Request::ErrorCodes => Ok(error_code_table()),
        Request::Status => Ok(match crate::session::current() {
            Some(s) => json!({
                "running": true,
                "injected": s.injected,
                "dump_dir": s.monitor.config().dump_dir,
                "window_open": s.monitor.window_open(),
            }),
            None => json!({"running": false}),
        }),
        Request::Start {
            output_dir,
            settings,
        } => {
            crate::session::start(start_config(&output_dir, &settings)?, false)?;
            crate::exit::flush_at_exit();
            Ok(Value::Null)
        }
        Request::Stop => {
            // The Python side makes the traces of the windows written (this process
            // writes only their JSON), in the format the session was given.
            let format = with(|s| Ok(s.monitor.config().trace_format)).ok();
            match crate::session::stop() {
                Some(stats) => {
                    let mut answer = serde_json::to_value(stats?).unwrap_or(Value::Null);
                    if let (Some(object), Some(format)) = (answer.as_object_mut(), format) {
                        object.insert("trace_format".into(), format.name().into());
                    }
                    Ok(answer)
                }
                None => Err(StateError::NotMonitoring.into()),
            }
        }
        Request::Stats => Ok(with(|s| {
            Ok(serde_json::to_value(s.monitor.stats()).unwrap_or(Value::Null))
        })?),
        Request::Flush { forced } => {
            with(|s| s.monitor.flush(forced))?;
            Ok(Value::Null)
        }
        Request::PrepareWindow => {
            with(|s| s.monitor.prepare_window())?;
            Ok(Value::Null)
        }
        Request::StartWindow {
            withhold_api_from_clients: withhold,
        } => {
            // The merged trace of a torch.profiler session brings runtime and
            // driver calls from the window: the profiler must not get them too.
            let start_ns = with(|s| s.open_window("the Python API", None))?;
            crate::clients::WITHHOLD_API.store(withhold, Ordering::Relaxed);
            Ok(json!({"start_ns": start_ns}))
        }
        Request::EndWindow => Ok(with(|s| {
            let window = crate::session::end_window(s)?;
            Ok(serde_json::to_value(window).unwrap_or(Value::Null))
        })?),
        Request::PushAnnotation { name } => {
            let id = with(|s| s.monitor.push_annotation(&name))?;
            Ok(json!({"id": id}))
        }
        Request::PopAnnotation => Ok(json!({"id": with(|s| s.monitor.pop_annotation())?})),
        Request::Rearm => Ok(json!({"buffers_held_by_cupti": with(|s| s.monitor.rearm())?})),
        Request::PythonStacks { on } => {
            let was_on = with(|s| s.monitor.python_stacks(on))?;
            Ok(json!({"was_on": was_on}))
        }
        Request::Step => {
            let written = with(|s| s.step())?;
            Ok(json!({"window_written": written.map(|p| p.display().to_string())}))
        }
    }
}

/// The settings of a `start` request: `output_dir` (this process's dump directory)
/// and any settings of the table by name, as text (`"8MiB"`, `"500ms"`) or numbers
/// (bytes, seconds), parsed as the environment's are. The `CUPMON_*` variables
/// apply first, so that `CUPMON_KEEP=1GiB python train.py` bounds a collection
/// started from Python as it bounds `cupmon run`'s; the request's fields win.
fn start_config(dir: &str, settings: &BTreeMap<String, Value>) -> Result<MonitorConfig, AbiError> {
    let mut config = MonitorConfig::new(dir);
    config.apply_env(|name| std::env::var(name).ok())?;
    for (key, value) in settings {
        if value.is_null() {
            continue;
        }
        // Earlier versions of the Python module sent seconds under this name.
        let key = if key == "flush_period_s" {
            "flush_period"
        } else {
            key
        };
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(","),
            Value::Bool(b) => u8::from(*b).to_string(),
            other => other.to_string(),
        };
        config.set(key, &text)?;
    }
    config.validate()?;
    Ok(config)
}

/// `char *cupmon_call(const char *request_json)`: the answer is a
/// NUL-terminated JSON string to release with [`cupmon_free`]; NULL only if
/// the request pointer is NULL.
///
/// # Safety
/// `request` must be NULL or a valid NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cupmon_call(request: *const c_char) -> *mut c_char {
    if request.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the caller passes a valid NUL-terminated string (see above).
    let text = unsafe { CStr::from_ptr(request) }
        .to_string_lossy()
        .into_owned();
    let answer = catch_unwind(AssertUnwindSafe(|| call(&text)))
        .unwrap_or_else(|_| AbiError::panicked().answer());
    CString::new(answer.to_string())
        .unwrap_or_default()
        .into_raw()
}

/// Release an answer of [`cupmon_call`].
///
/// # Safety
/// `answer` must be NULL or a pointer returned by `cupmon_call`, freed once.
#[no_mangle]
pub unsafe extern "C" fn cupmon_free(answer: *mut c_char) {
    if !answer.is_null() {
        // SAFETY: `answer` came from `CString::into_raw` in `cupmon_call`.
        drop(unsafe { CString::from_raw(answer) });
    }
}
