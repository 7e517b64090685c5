//! Reading a trace-window JSON document into a [`MergeWindow`], with the
//! checks that `seed_merge.py`'s `load_window` and PyTorch's merge make.
//! The document is streamed one event (or top-level member) at a time, so
//! that reading takes no more memory than the window plus its largest value.

use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::Path;

use super::stream::{locate, open_input, StreamBuf, StreamError};
use super::window_event::{build_event, read_fields};
use super::window_input::{MergeEvent, MergeWindow};
use super::DEFAULT_MAX_EVENT_BYTES;
use crate::json::value::{py_int_from_str, Value};
use crate::{CupmonInfo, TraceError};

impl MergeWindow {
    /// Read a window file (`.gz` decompressed on the fly, by name) with the
    /// default limit of one value ([`crate::DEFAULT_MAX_EVENT_BYTES`]).
    pub fn read(path: &Path) -> Result<Self, TraceError> {
        Self::read_with_limit(path, DEFAULT_MAX_EVENT_BYTES)
    }

    /// Read a window file; no event or top-level value may exceed
    /// `max_event_bytes` (as text or parsed), which bounds the memory the
    /// reading takes beyond the window itself.
    pub fn read_with_limit(path: &Path, max_event_bytes: u64) -> Result<Self, TraceError> {
        let io_err = |err| TraceError::Io {
            path: path.to_path_buf(),
            what: "cannot read",
            err,
        };
        let src = open_input(path).map_err(io_err)?;
        match parse_window(&mut StreamBuf::new(src, max_event_bytes)) {
            Ok(mut window) => {
                // A window file in its dump directory: the dump's Python stacks.
                if let Some(dir) = path.parent() {
                    if cupmon_records::dump::StackTable::present(dir) {
                        let table = cupmon_records::dump::StackTable::read(dir);
                        window.set_python_stacks(std::sync::Arc::new(table));
                    }
                }
                Ok(window)
            }
            Err(e) => {
                let (offset, msg) = e.located().map_err(io_err)?;
                // Line and column come from reading the file again; a pipe or a
                // device cannot be (it would wait, or read other bytes).
                let location = if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
                    locate(open_input(path), offset)
                } else {
                    format!("byte {offset}")
                };
                Err(TraceError::Input {
                    file: path.display().to_string(),
                    location,
                    msg,
                })
            }
        }
    }

    /// Parse a window document. `source` names it in errors (usually the file path).
    pub fn from_json(bytes: &[u8], source: &str) -> Result<Self, TraceError> {
        parse_window(&mut StreamBuf::new(bytes, DEFAULT_MAX_EVENT_BYTES)).map_err(|e| {
            match e.located() {
                Ok((offset, msg)) => TraceError::Input {
                    file: source.to_owned(),
                    location: locate(Ok(bytes), offset),
                    msg,
                },
                Err(err) => TraceError::Io {
                    path: source.into(),
                    what: "cannot read",
                    err,
                },
            }
        })
    }
}

/// Why a window could not be read.
enum WindowError {
    Stream(StreamError),
    /// Valid JSON that PyTorch's merge rejects: where and why.
    Bad(u64, String),
}

impl From<StreamError> for WindowError {
    fn from(e: StreamError) -> Self {
        Self::Stream(e)
    }
}

impl WindowError {
    fn located(self) -> Result<(u64, String), std::io::Error> {
        match self {
            WindowError::Stream(e) => e.located("unexpected end of data (truncated JSON?)"),
            WindowError::Bad(offset, msg) => Ok((offset, msg)),
        }
    }
}

fn parse_window<R: Read>(s: &mut StreamBuf<R>) -> Result<MergeWindow, WindowError> {
    let mut window = MergeWindow::default();
    let mut saw_events = false;
    let (top, at) = s.step(|r| r.peek())?;
    if top != b'{' {
        // Validate first so that "not JSON" wins over "not an object".
        s.step(|r| r.skip_value())?;
        s.expect_end()?;
        return Err(WindowError::Bad(
            at.start,
            "a trace window must be a JSON object".to_owned(),
        ));
    }
    s.step(|r| r.expect(b'{', "'{'"))?;
    let (empty, _) = s.step(|r| r.empty_close(b'}'))?;
    if !empty {
        loop {
            let (key, _) = s.step(|r| r.key().map(|k| k.decode()))?;
            match key.as_str() {
                "events" => {
                    window.events = parse_events(s)?;
                    saw_events = true;
                }
                "user_annotations" => {
                    let (v, at) = s.step(|r| r.value())?;
                    window.user_annotations =
                        user_annotations(v).map_err(|m| WindowError::Bad(at.start, m))?;
                }
                "thread_resource_map" => {
                    let (v, at) = s.step(|r| r.value())?;
                    window.thread_resource_map =
                        thread_resource_map(v).map_err(|m| WindowError::Bad(at.start, m))?;
                }
                "device_properties" => {
                    let ((), range) = s.step(|r| r.skip_value())?;
                    let text = String::from_utf8_lossy(s.bytes(&range)).into_owned();
                    window.device_properties = text.starts_with('[').then_some(text);
                }
                "cupmon" => {
                    let (v, _) = s.step(|r| r.value())?;
                    window.cupmon = cupmon_info(&v);
                }
                // cupmon's windows carry the process's rank: a trace made from the
                // window file outside the process keeps it (one that does not parse is
                // no rank, not an error).
                "distributedInfo" => {
                    let (v, _) = s.step(|r| r.value())?;
                    window.distributed_info = serde_json::from_value(to_serde(&v)).ok();
                }
                // cupmon's NVTX ranges and marks; an entry that does not read is left
                // out (PyTorch's merge reads none of them).
                "cpu_annotations" => {
                    let (v, _) = s.step(|r| r.value())?;
                    window.cpu_annotations = cpu_annotations(to_serde(&v));
                }
                // cupmon's records on their own clock (`off_clock.rs`).
                "off_clock" => {
                    let (v, _) = s.step(|r| r.value())?;
                    window.off_clock = super::off_clock::parse(to_serde(&v));
                }
                _ => {
                    s.step(|r| r.skip_value())?;
                }
            }
            let (more, _) = s.step(|r| r.comma_or(b'}'))?;
            if !more {
                break;
            }
        }
    }
    s.expect_end()?;
    if !saw_events {
        return Err(WindowError::Bad(0, "missing key 'events'".to_owned()));
    }
    Ok(window)
}

fn parse_events<R: Read>(s: &mut StreamBuf<R>) -> Result<Vec<MergeEvent>, WindowError> {
    let (open, at) = s.step(|r| r.peek())?;
    let not_a_list = || WindowError::Bad(at.start, "'events' must be a list".to_owned());
    match open {
        b'[' => {}
        // Iterating an empty dict or string yields nothing, so PyTorch's merge accepts them.
        b'{' | b'"' => {
            let (v, _) = s.step(|r| r.value())?;
            return match v {
                Value::Object(m) if m.is_empty() => Ok(Vec::new()),
                Value::Str(s) if s.is_empty() => Ok(Vec::new()),
                _ => Err(not_a_list()),
            };
        }
        _ => {
            s.step(|r| r.skip_value())?;
            return Err(not_a_list());
        }
    }
    s.step(|r| r.expect(b'[', "'['"))?;
    let mut events = Vec::new();
    let (empty, _) = s.step(|r| r.empty_close(b']'))?;
    if empty {
        return Ok(events);
    }
    loop {
        let index = events.len();
        let (fields, at) = s.step(read_fields)?;
        let bad = |msg: String| WindowError::Bad(at.start, format!("event {index}: {msg}"));
        let fields = fields.ok_or_else(|| bad("each event must be a JSON object".to_owned()))?;
        events.push(build_event(&fields).map_err(bad)?);
        let (more, _) = s.step(|r| r.comma_or(b']'))?;
        if !more {
            return Ok(events);
        }
    }
}

/// `int(k)` for a JSON object key, as `load_window` converts them.
fn int_key(k: &str, what: &str) -> Result<i128, String> {
    py_int_from_str(k).ok_or_else(|| format!("{what}: key {k:?} is not an integer"))
}

/// Python's `int(v)` where the caller does not catch errors.
fn strict_int(v: &Value, what: &str) -> Result<i128, String> {
    match v.py_int() {
        Ok(Some(i)) => Ok(i),
        Ok(None) => Err(format!("{what}: {} is not an integer", v.py_str())),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

fn user_annotations(v: Value) -> Result<FxHashMap<i128, Option<String>>, String> {
    let Value::Object(members) = v else {
        return Err("'user_annotations' must be an object".to_owned());
    };
    let mut out = FxHashMap::with_capacity_and_hasher(members.len(), Default::default());
    for (k, v) in members {
        let id = int_key(&k, "user_annotations")?;
        out.insert(
            id,
            match v {
                Value::Str(s) => Some(s),
                _ => None,
            },
        );
    }
    Ok(out)
}

fn thread_resource_map(v: Value) -> Result<FxHashMap<i128, FxHashMap<i128, i128>>, String> {
    let Value::Object(members) = v else {
        return Err("'thread_resource_map' must be an object".to_owned());
    };
    let mut out: FxHashMap<i128, FxHashMap<i128, i128>> = FxHashMap::default();
    for (pid, inner) in members {
        let pid = int_key(&pid, "thread_resource_map")?;
        let Value::Object(threads) = inner else {
            return Err(format!("thread_resource_map[{pid}] must be an object"));
        };
        let mut map = FxHashMap::with_capacity_and_hasher(threads.len(), Default::default());
        for (k, v) in threads {
            let k = int_key(&k, "thread_resource_map")?;
            map.insert(k, strict_int(&v, "thread_resource_map")?);
        }
        out.insert(pid, map);
    }
    Ok(out)
}

fn cupmon_info(v: &Value) -> Option<CupmonInfo> {
    let Value::Object(members) = v else {
        return None;
    };
    let get = |name: &str| members.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let int = |name: &str| match get(name) {
        Some(Value::Int(i)) => u64::try_from(*i).ok(),
        _ => None,
    };
    Some(CupmonInfo {
        version: match get("version") {
            Some(Value::Str(s)) => s.clone(),
            _ => String::new(),
        },
        // Missing or null: unknown, as the window says (or an older one did not say).
        dropped_records: int("dropped_records"),
        dropped_records_note: match get("dropped_records_note") {
            Some(Value::Str(s)) => Some(s.clone()),
            _ => None,
        },
        cupti_version: int("cupti_version").and_then(|v| u32::try_from(v).ok()),
        unresolved_kernel_names: int("unresolved_kernel_names").unwrap_or(0),
        clock_converted: int("clock_converted").unwrap_or(0),
        off_clock_records: int("off_clock_records").unwrap_or(0),
        slice: get("slice").and_then(slice_info),
        retired: get("retired").and_then(retired),
        // A merge's own finding; a window does not carry one in.
        clock_alignment: None,
        kernels: get("kernels").and_then(|v| serde_json::from_value(to_serde(v)).ok()),
    })
}

/// A parsed value as serde's, for blocks read whole into a typed struct.
/// The entries of a window's `cpu_annotations` that read as such.
fn cpu_annotations(v: serde_json::Value) -> Vec<crate::CpuAnnotation> {
    match v {
        serde_json::Value::Array(items) => items
            .into_iter()
            .filter_map(|a| serde_json::from_value(a).ok())
            .collect(),
        _ => Vec::new(),
    }
}

fn to_serde(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => (*b).into(),
        Value::Int(i) => u64::try_from(*i)
            .map(serde_json::Value::from)
            .or_else(|_| i64::try_from(*i).map(serde_json::Value::from))
            .unwrap_or(serde_json::Value::Null),
        Value::BigInt(_) => serde_json::Value::Null,
        Value::Float(f) => serde_json::Value::from(*f),
        Value::Str(s) => s.as_str().into(),
        Value::Array(items) => items.iter().map(to_serde).collect(),
        Value::Object(members) => members
            .iter()
            .map(|(k, v)| (k.clone(), to_serde(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// The integer member `name` of an object's members.
fn member_u64(members: &[(String, Value)], name: &str) -> Option<u64> {
    match members.iter().find(|(k, _)| k == name).map(|(_, v)| v) {
        Some(Value::Int(i)) => u64::try_from(*i).ok(),
        _ => None,
    }
}

/// `{"from_ns": .., "to_ns": ..}` of a sliced window (kept when it is exported).
fn slice_info(v: &Value) -> Option<crate::SliceInfo> {
    let Value::Object(m) = v else { return None };
    Some(crate::SliceInfo {
        from_ns: member_u64(m, "from_ns"),
        to_ns: member_u64(m, "to_ns"),
    })
}

fn retired(v: &Value) -> Option<cupmon_records::dump::Retired> {
    let Value::Object(m) = v else { return None };
    Some(cupmon_records::dump::Retired {
        segments: member_u64(m, "segments").unwrap_or(0),
        bytes: member_u64(m, "bytes").unwrap_or(0),
        records: member_u64(m, "records").unwrap_or(0),
        kernels: member_u64(m, "kernels").unwrap_or(0),
        first_ns: member_u64(m, "first_ns"),
        last_ns: member_u64(m, "last_ns"),
    })
}
