//! The requests of the injection library's C ABI (`char *cupmon_call(const char
//! *request_json)`), typed once: the library decodes them into [`Request`], the
//! Python package builds them through its extension module, which encodes a
//! [`Request`] (`_cupmon.abi_request`), so that an op or a field the library does
//! not know fails where it is written, with the name of what is wrong.
//!
//! On the wire a request is a JSON object whose `"op"` names the variant in
//! snake case (`{"op": "push_annotation", "name": "step 3"}`); fields it does not
//! know are ignored (an older library and a newer caller still talk), and a
//! missing optional field is `false`. The answers are JSON values the library
//! writes (`{"ok": true, "result": ...}` or an error from
//! `cupmon_error_code::ErrorCode`'s table).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request to the process's monitor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The ABI's version and cupmon's.
    Version,
    /// The error-code table.
    ErrorCodes,
    /// Whether a session runs, whether it was injected, its dump directory.
    Status,
    /// Start a session writing into `output_dir`, with any setting of
    /// cupmon-config's table by name (`"buffer_size": "8MiB"`, numbers in bytes
    /// or seconds, a list for `kinds`; `null` means not given).
    Start {
        output_dir: String,
        #[serde(flatten)]
        settings: BTreeMap<String, Value>,
    },
    Stop,
    Stats,
    /// Flush CUPTI's buffers (`forced`: also the ones not full).
    Flush {
        #[serde(default)]
        forced: bool,
    },
    PrepareWindow,
    /// Open a trace window; `withhold_api_from_clients`: the profiler sharing
    /// CUPTI does not get the runtime and driver calls too.
    StartWindow {
        #[serde(default)]
        withhold_api_from_clients: bool,
    },
    EndWindow,
    PushAnnotation {
        name: String,
    },
    PopAnnotation,
    Rearm,
    /// A program step: counted, and a window opened for N steps closes after N.
    Step,
    /// Note each launch's Python stack from now on (`on`), or stop noting them.
    PythonStacks {
        on: bool,
    },
}

/// Every op's name, as `"op"` spells it (the variants of [`Request`] in order).
pub const OPS: &[&str] = &[
    "version",
    "error_codes",
    "status",
    "start",
    "stop",
    "stats",
    "flush",
    "prepare_window",
    "start_window",
    "end_window",
    "push_annotation",
    "pop_annotation",
    "rearm",
    "step",
    "python_stacks",
];

/// Why a request could not be read; the message says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RequestError(pub String);

impl Request {
    /// The request in `text` (JSON).
    pub fn from_json(text: &str) -> Result<Self, RequestError> {
        let value = serde_json::from_str::<Value>(text)
            .map_err(|e| RequestError(format!("the request is not JSON: {e}")))?;
        Self::from_value(value)
    }

    /// The request in `value`: an object with an `"op"` string naming a known op,
    /// and the fields that op needs.
    pub fn from_value(value: Value) -> Result<Self, RequestError> {
        let op = match value.get("op") {
            Some(Value::String(op)) => op.clone(),
            _ => return Err(RequestError("the request has no \"op\" string".into())),
        };
        if !OPS.contains(&op.as_str()) {
            return Err(RequestError(format!(
                "unknown op {op:?} (known: {})",
                OPS.join(", ")
            )));
        }
        serde_json::from_value(value).map_err(|e| RequestError(format!("{op}: {e}")))
    }

    /// The request as JSON text, as `cupmon_call` takes it.
    pub fn to_json(&self) -> String {
        // A map of strings to JSON values cannot fail to serialize.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The op's name.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Version => "version",
            Request::ErrorCodes => "error_codes",
            Request::Status => "status",
            Request::Start { .. } => "start",
            Request::Stop => "stop",
            Request::Stats => "stats",
            Request::Flush { .. } => "flush",
            Request::PrepareWindow => "prepare_window",
            Request::StartWindow { .. } => "start_window",
            Request::EndWindow => "end_window",
            Request::PushAnnotation { .. } => "push_annotation",
            Request::PopAnnotation => "pop_annotation",
            Request::Rearm => "rearm",
            Request::Step => "step",
            Request::PythonStacks { .. } => "python_stacks",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_reads_back_as_itself() {
        for op in OPS {
            let minimal = match *op {
                "start" => format!(r#"{{"op": "{op}", "output_dir": "/d"}}"#),
                "push_annotation" => format!(r#"{{"op": "{op}", "name": "n"}}"#),
                "python_stacks" => format!(r#"{{"op": "{op}", "on": false}}"#),
                _ => format!(r#"{{"op": "{op}"}}"#),
            };
            let request = Request::from_json(&minimal).expect(op);
            assert_eq!(request.op(), *op);
            assert_eq!(Request::from_json(&request.to_json()), Ok(request));
        }
    }

    #[test]
    fn start_keeps_its_settings_and_the_op_is_not_one() {
        let text = r#"{"op": "start", "output_dir": "/d", "buffer_size": "8MiB",
                       "kinds": ["KERNEL"], "flush_period_s": null}"#;
        let Request::Start {
            output_dir,
            settings,
        } = Request::from_json(text).expect("start")
        else {
            panic!("not a start");
        };
        assert_eq!(output_dir, "/d");
        let names: Vec<&str> = settings.keys().map(String::as_str).collect();
        assert_eq!(names, ["buffer_size", "flush_period_s", "kinds"]);
    }

    #[test]
    fn optional_fields_default_to_false_and_unknown_ones_are_ignored() {
        let r = Request::from_json(r#"{"op": "flush", "later": 1}"#).expect("flush");
        assert_eq!(r, Request::Flush { forced: false });
        let r = Request::from_json(r#"{"op": "start_window", "withhold_api_from_clients": true}"#);
        assert_eq!(
            r,
            Ok(Request::StartWindow {
                withhold_api_from_clients: true
            })
        );
    }

    /// The ops `python/cupmon/_monitor.py` sends (`call("op", ...)` and the
    /// `{"op": "version"}` of its handshake) are ops of the enum.
    #[test]
    fn every_op_the_python_package_sends_is_a_request() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../python/cupmon/_monitor.py");
        let text = std::fs::read_to_string(&path).expect("the Python package's _monitor.py");
        let mut sent = std::collections::BTreeSet::new();
        for marker in ["call(\"", "{\"op\": \""] {
            for piece in text.split(marker).skip(1) {
                sent.extend(piece.find('"').map(|end| &piece[..end]));
            }
        }
        let unknown: Vec<&&str> = sent.iter().filter(|op| !OPS.contains(op)).collect();
        assert!(
            unknown.is_empty(),
            "{}: ops the library does not know: {unknown:?}",
            path.display()
        );
        assert!(sent.len() >= 10, "{}: found only {sent:?}", path.display());
    }

    #[test]
    fn what_is_wrong_is_named() {
        let err = |t: &str| Request::from_json(t).expect_err(t).0;
        assert!(err("{").contains("not JSON"));
        assert!(err("{}").contains("no \"op\" string"));
        assert!(err(r#"{"op": 3}"#).contains("no \"op\" string"));
        assert!(err(r#"{"op": "nope"}"#).contains("unknown op \"nope\""));
        let missing = err(r#"{"op": "start"}"#);
        assert!(
            missing.contains("start") && missing.contains("output_dir"),
            "{missing}"
        );
        let missing = err(r#"{"op": "python_stacks"}"#);
        assert!(
            missing.starts_with("python_stacks: ") && missing.contains("`on`"),
            "{missing}"
        );
        let wrong = err(r#"{"op": "push_annotation", "name": 3}"#);
        assert!(wrong.starts_with("push_annotation: "), "{wrong}");
    }
}
