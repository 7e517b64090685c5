//! The C ABI to the process's monitor: one JSON request in, one JSON answer
//! out, so that callers (the Python module through ctypes, tools) need one
//! symbol and the ABI can grow without breaking them.
//!
//! Request: `{"op": "<name>", ...}`. Answer: `{"ok": true, "result": ...}` or
//! `{"ok": false, "error": "<message>", "kind": "<class>"}`. Ops: `version`,
//! `status`, `start` (`output_dir`, optional `kinds`, `buffer_size`,
//! `max_outstanding`, `flush_period_s`), `stop`, `stats`, `flush` (`forced`),
//! `prepare_window`, `start_window`, `end_window`, `push_annotation` (`name`),
//! `pop_annotation`.

use cupmon_monitor::{MonitorConfig, MonitorError};
use serde_json::{json, Value};
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use crate::session::with;

/// Version of this ABI; bumped when an op changes incompatibly.
pub const ABI_VERSION: u32 = 1;

/// Handle one request (also usable from Rust, e.g. in tests).
pub fn call(request: &str) -> Value {
    let answer = serde_json::from_str::<Value>(request)
        .map_err(|e| MonitorError::Config(format!("the request is not JSON: {e}")))
        .and_then(|req| dispatch(&req));
    match answer {
        Ok(result) => json!({"ok": true, "result": result}),
        Err(e) => json!({"ok": false, "error": e.to_string(), "kind": error_kind(&e)}),
    }
}

fn error_kind(e: &MonitorError) -> &'static str {
    match e {
        MonitorError::Load(cupmon_cupti::LoadError::NoDriver { .. }) => "no_driver",
        MonitorError::Load(_) => "no_cupti",
        MonitorError::Cupti(_) => "cupti",
        MonitorError::Dump(_) => "dump",
        MonitorError::Config(_) | MonitorError::Setting(_) => "bad_argument",
        MonitorError::State(_) => "state",
        MonitorError::Worker(_) => "internal",
    }
}

fn dispatch(req: &Value) -> Result<Value, MonitorError> {
    let op = req
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| MonitorError::Config("the request has no \"op\"".into()))?;
    match op {
        "version" => Ok(json!({"abi": ABI_VERSION, "cupmon": env!("CARGO_PKG_VERSION")})),
        "status" => Ok(match crate::session::current() {
            Some(s) => json!({
                "running": true,
                "injected": s.injected,
                "dump_dir": s.monitor.config().dump_dir,
                "window_open": s.monitor.window_open(),
            }),
            None => json!({"running": false}),
        }),
        "start" => {
            crate::session::start(start_config(req)?, false)?;
            crate::exit::flush_at_exit();
            Ok(Value::Null)
        }
        "stop" => match crate::session::stop() {
            Some(stats) => Ok(serde_json::to_value(stats?).unwrap_or(Value::Null)),
            None => Err(MonitorError::State(
                "cupmon is not monitoring this process".into(),
            )),
        },
        "stats" => with(|s| Ok(serde_json::to_value(s.monitor.stats()).unwrap_or(Value::Null))),
        "flush" => {
            let forced = req.get("forced").and_then(Value::as_bool).unwrap_or(false);
            with(|s| s.monitor.flush(forced)).map(|()| Value::Null)
        }
        "prepare_window" => with(|s| s.monitor.prepare_window()).map(|()| Value::Null),
        "start_window" => {
            // The merged trace of a torch.profiler session brings runtime and
            // driver calls from the window: the profiler must not get them too.
            let withhold = req
                .get("withhold_api_from_clients")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let started = with(|s| s.monitor.start_window());
            if started.is_ok() {
                crate::clients::WITHHOLD_API.store(withhold, Ordering::Relaxed);
            }
            started.map(|t| json!({"start_ns": t}))
        }
        "end_window" => with(|s| {
            let window = crate::session::end_window(s)?;
            Ok(serde_json::to_value(window).unwrap_or(Value::Null))
        }),
        "push_annotation" => {
            let name = req.get("name").and_then(Value::as_str).ok_or_else(|| {
                MonitorError::Config("push_annotation needs a \"name\" string".into())
            })?;
            with(|s| s.monitor.push_annotation(name)).map(|id| json!({"id": id}))
        }
        "pop_annotation" => with(|s| s.monitor.pop_annotation()).map(|id| json!({"id": id})),
        "rearm" => with(|s| s.monitor.rearm()).map(|held| json!({"buffers_held_by_cupti": held})),
        other => Err(MonitorError::Config(format!("unknown op {other:?}"))),
    }
}

/// The settings of a `start` request: `output_dir` (this process's dump directory)
/// and any settings of the table by name, as text (`"8MiB"`, `"500ms"`) or numbers
/// (bytes, seconds), parsed as the environment's are.
fn start_config(req: &Value) -> Result<MonitorConfig, MonitorError> {
    let dir = req
        .get("output_dir")
        .and_then(Value::as_str)
        .ok_or_else(|| MonitorError::Config("start needs an \"output_dir\" string".into()))?;
    let mut config = MonitorConfig::new(dir);
    let Some(fields) = req.as_object() else {
        return Err(MonitorError::Config("the request is not an object".into()));
    };
    for (key, value) in fields {
        if matches!(key.as_str(), "op" | "output_dir") || value.is_null() {
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
    let answer = catch_unwind(AssertUnwindSafe(|| call(&text))).unwrap_or_else(
        |_| json!({"ok": false, "error": "internal error (a panic in cupmon)", "kind": "internal"}),
    );
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
