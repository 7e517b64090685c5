//! Reading a trace-window JSON document into a [`MergeWindow`], with the
//! checks that `seed_merge.py`'s `load_window` and the seed's merge make.

use rustc_hash::FxHashMap;
use std::path::Path;

use super::window_input::{
    ApiEvent, ExternalCorrelation, GpuDetail, GpuEvent, GpuKind, Lazy, MergeEvent, MergeWindow,
    OverheadEvent,
};
use crate::json::read::{ReadError, Reader};
use crate::json::value::{py_int_from_str, Value};
use crate::{CupmonInfo, TraceError};
use cupmon_records::ApiDomain;

/// The event fields the merge reads, in one table so parsing is a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Kind,
    DeviceId,
    StreamId,
    ContextId,
    CorrelationId,
    StartNs,
    EndNs,
    GraphId,
    GraphNodeId,
    Name,
    Annotation,
    Bytes,
    CopyKind,
    SrcKind,
    DstKind,
    Flags,
    Value,
    MemoryKind,
    Cbid,
    ProcessId,
    ThreadId,
    ExternalKind,
    ExternalId,
}

const FIELDS: [(&str, Field); 23] = [
    ("kind", Field::Kind),
    ("device_id", Field::DeviceId),
    ("stream_id", Field::StreamId),
    ("context_id", Field::ContextId),
    ("correlation_id", Field::CorrelationId),
    ("start_ns", Field::StartNs),
    ("end_ns", Field::EndNs),
    ("graph_id", Field::GraphId),
    ("graph_node_id", Field::GraphNodeId),
    ("name", Field::Name),
    ("annotation", Field::Annotation),
    ("bytes", Field::Bytes),
    ("copy_kind", Field::CopyKind),
    ("src_kind", Field::SrcKind),
    ("dst_kind", Field::DstKind),
    ("flags", Field::Flags),
    ("value", Field::Value),
    ("memory_kind", Field::MemoryKind),
    ("cbid", Field::Cbid),
    ("process_id", Field::ProcessId),
    ("thread_id", Field::ThreadId),
    ("external_kind", Field::ExternalKind),
    ("external_id", Field::ExternalId),
];

fn field_name(f: Field) -> &'static str {
    FIELDS[f as usize].0
}

/// The raw fields of one event object.
struct Fields([Option<Value>; 23]);

impl Fields {
    fn get(&self, f: Field) -> Option<&Value> {
        self.0[f as usize].as_ref()
    }

    /// `_as_int(event[f])`: the seed raises KeyError when the field is missing.
    fn required_int(&self, f: Field) -> Result<i128, String> {
        match self.get(f) {
            None => Err(format!("missing field '{}'", field_name(f))),
            Some(v) => as_int(v).map_err(|e| format!("field '{}': {e}", field_name(f))),
        }
    }

    /// `_as_int(event.get(f, 0))`.
    fn int_or_zero(&self, f: Field) -> Result<i128, String> {
        self.get(f)
            .map_or(Ok(0), as_int)
            .map_err(|e| format!("field '{}': {e}", field_name(f)))
    }

    fn lazy_int(&self, f: Field) -> Lazy<i128> {
        match self.get(f) {
            None => Lazy::Missing(field_name(f)),
            Some(v) => match as_int(v) {
                Ok(i) => Lazy::Value(i),
                Err(e) => Lazy::Raises(format!("field '{}': {e}", field_name(f))),
            },
        }
    }

    fn lazy_int_or_zero(&self, f: Field) -> Lazy<i128> {
        match self.lazy_int(f) {
            Lazy::Missing(_) => Lazy::Value(0),
            other => other,
        }
    }
}

/// The seed's `_as_int`: `int(v)`, 0 where that raises TypeError/ValueError.
fn as_int(v: &Value) -> Result<i128, String> {
    v.py_int().map(|i| i.unwrap_or(0))
}

impl MergeWindow {
    /// Read a window file (`.gz` decompressed by name).
    pub fn read(path: &Path) -> Result<Self, TraceError> {
        let io_err = |err| TraceError::Io {
            path: path.to_path_buf(),
            what: "cannot read",
            err,
        };
        let raw = std::fs::read(path).map_err(io_err)?;
        let bytes = if crate::is_gz(path) {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut out)
                .map_err(io_err)?;
            out
        } else {
            raw
        };
        Self::from_json(&bytes, &path.display().to_string())
    }

    /// Parse a window document. `source` names it in errors (usually the file path).
    pub fn from_json(bytes: &[u8], source: &str) -> Result<Self, TraceError> {
        parse_window(bytes).map_err(|(pos, msg)| TraceError::Input {
            file: source.to_owned(),
            location: crate::json::read::describe_position(bytes, pos),
            msg,
        })
    }
}

type ParseResult<T> = Result<T, (usize, String)>;

fn read_err(e: ReadError, len: usize) -> (usize, String) {
    match e {
        ReadError::Incomplete => (len, "unexpected end of data (truncated JSON?)".to_owned()),
        ReadError::Syntax { pos, msg } => (pos, msg.to_owned()),
    }
}

fn parse_window(bytes: &[u8]) -> ParseResult<MergeWindow> {
    let len = bytes.len();
    let mut r = Reader::new(bytes);
    let mut window = MergeWindow::default();
    let mut saw_events = false;
    let top = r.peek().map_err(|e| read_err(e, len))?;
    if top != b'{' {
        // Validate first so that "not JSON" wins over "not an object".
        r.skip_value().map_err(|e| read_err(e, len))?;
        return Err((0, "a trace window must be a JSON object".to_owned()));
    }
    r.pos += 1;
    if !r.empty_close(b'}').map_err(|e| read_err(e, len))? {
        loop {
            let key = r.key().map_err(|e| read_err(e, len))?;
            let at = r.pos;
            if key.eq_str("events") {
                window.events = parse_events(&mut r).map_err(|e| match e {
                    EventsError::Read(e) => read_err(e, len),
                    EventsError::Bad(pos, msg) => (pos, msg),
                })?;
                saw_events = true;
            } else if key.eq_str("user_annotations") {
                let v = r.value().map_err(|e| read_err(e, len))?;
                window.user_annotations = user_annotations(v).map_err(|m| (at, m))?;
            } else if key.eq_str("thread_resource_map") {
                let v = r.value().map_err(|e| read_err(e, len))?;
                window.thread_resource_map = thread_resource_map(v).map_err(|m| (at, m))?;
            } else if key.eq_str("device_properties") {
                let start = r.pos;
                r.skip_value().map_err(|e| read_err(e, len))?;
                let text = String::from_utf8_lossy(&bytes[start..r.pos])
                    .trim()
                    .to_owned();
                window.device_properties = text.starts_with('[').then_some(text);
            } else if key.eq_str("cupmon") {
                let v = r.value().map_err(|e| read_err(e, len))?;
                window.cupmon = cupmon_info(&v);
            } else {
                r.skip_value().map_err(|e| read_err(e, len))?;
            }
            if !r.comma_or(b'}').map_err(|e| read_err(e, len))? {
                break;
            }
        }
    }
    r.skip_ws();
    if r.pos != len {
        return Err((r.pos, "extra data after the JSON document".to_owned()));
    }
    if !saw_events {
        return Err((0, "missing key 'events'".to_owned()));
    }
    Ok(window)
}

enum EventsError {
    Read(ReadError),
    Bad(usize, String),
}

impl From<ReadError> for EventsError {
    fn from(e: ReadError) -> Self {
        Self::Read(e)
    }
}

fn parse_events(r: &mut Reader<'_>) -> Result<Vec<MergeEvent>, EventsError> {
    let at = r.pos;
    match r.peek()? {
        b'[' => {}
        // Iterating an empty dict or string yields nothing, so the seed accepts them.
        b'{' | b'"' => {
            let v = r.value()?;
            return match v {
                Value::Object(m) if m.is_empty() => Ok(Vec::new()),
                Value::Str(s) if s.is_empty() => Ok(Vec::new()),
                _ => Err(EventsError::Bad(at, "'events' must be a list".to_owned())),
            };
        }
        _ => {
            r.skip_value()?;
            return Err(EventsError::Bad(at, "'events' must be a list".to_owned()));
        }
    }
    r.pos += 1;
    let mut events = Vec::new();
    if r.empty_close(b']')? {
        return Ok(events);
    }
    loop {
        let at = r.pos;
        let index = events.len();
        let fields = read_fields(r, index)?;
        let event = build_event(&fields)
            .map_err(|msg| EventsError::Bad(at, format!("event {index}: {msg}")))?;
        events.push(event);
        if !r.comma_or(b']')? {
            return Ok(events);
        }
    }
}

fn read_fields(r: &mut Reader<'_>, index: usize) -> Result<Fields, EventsError> {
    let at = r.pos;
    if r.peek()? != b'{' {
        r.skip_value()?;
        return Err(EventsError::Bad(
            at,
            format!("event {index}: each event must be a JSON object"),
        ));
    }
    r.pos += 1;
    let mut fields = Fields(Default::default());
    if r.empty_close(b'}')? {
        return Ok(fields);
    }
    loop {
        let key = r.key()?;
        let known = if key.escaped {
            let k = key.decode();
            FIELDS.iter().find(|(n, _)| *n == k).map(|&(_, f)| f)
        } else {
            FIELDS
                .iter()
                .find(|(n, _)| n.as_bytes() == key.raw)
                .map(|&(_, f)| f)
        };
        match known {
            Some(f) => {
                let v = match r.peek()? {
                    b'-' | b'0'..=b'9' => Value::from_num(r.number()?),
                    _ => r.value()?,
                };
                fields.0[f as usize] = Some(v);
            }
            None => r.skip_value()?,
        }
        if !r.comma_or(b'}')? {
            return Ok(fields);
        }
    }
}

fn build_event(f: &Fields) -> Result<MergeEvent, String> {
    let kind = match f.get(Field::Kind) {
        None => return Err("missing field 'kind'".to_owned()),
        Some(Value::Array(_) | Value::Object(_)) => {
            return Err("field 'kind' must not be a list or an object".to_owned())
        }
        Some(Value::Str(s)) => s.as_str(),
        Some(_) => "",
    };
    Ok(match kind {
        "kernel" => gpu_event(f, GpuKind::Kernel)?,
        "gpu_memcpy" => gpu_event(f, GpuKind::Memcpy)?,
        "gpu_memset" => gpu_event(f, GpuKind::Memset)?,
        "cuda_runtime" => api_event(f, ApiDomain::Runtime)?,
        "cuda_driver" => api_event(f, ApiDomain::Driver)?,
        "overhead" => MergeEvent::Overhead(Box::new(OverheadEvent {
            is_buffer_request: matches!(f.get(Field::Name), Some(Value::Str(s)) if s == "Activity Buffer Request"),
            start_ns_get: f.lazy_int_or_zero(Field::StartNs),
            name: match f.get(Field::Name) {
                None => Lazy::Missing("name"),
                Some(v) => Lazy::Value(v.py_str()),
            },
            start_ns: f.lazy_int(Field::StartNs),
            end_ns: f.lazy_int(Field::EndNs),
        })),
        "external_correlation" => MergeEvent::ExternalCorrelation(ExternalCorrelation {
            external_kind: f.lazy_int_or_zero(Field::ExternalKind),
            external_id: f.int_or_zero(Field::ExternalId)?,
            correlation_id: f.int_or_zero(Field::CorrelationId)?,
            end_ns_get: f.int_or_zero(Field::EndNs)?,
        }),
        _ => MergeEvent::Other {
            end_ns: f.int_or_zero(Field::EndNs)?,
        },
    })
}

fn gpu_event(f: &Fields, kind: GpuKind) -> Result<MergeEvent, String> {
    let detail = match kind {
        GpuKind::Kernel => GpuDetail::Kernel,
        GpuKind::Memcpy => GpuDetail::Memcpy {
            bytes: f.required_int(Field::Bytes)?,
            copy_kind: f.required_int(Field::CopyKind)?,
            src_kind: f.required_int(Field::SrcKind)?,
            dst_kind: f.required_int(Field::DstKind)?,
            flags: f.required_int(Field::Flags)?,
        },
        GpuKind::Memset => GpuDetail::Memset {
            bytes: f.required_int(Field::Bytes)?,
            value: f.required_int(Field::Value)?,
            memory_kind: f.required_int(Field::MemoryKind)?,
            flags: f.required_int(Field::Flags)?,
        },
    };
    let name = f
        .get(Field::Name)
        .ok_or_else(|| "missing field 'name'".to_owned())?
        .py_str();
    Ok(MergeEvent::Gpu(Box::new(GpuEvent {
        kind,
        device_id: f.required_int(Field::DeviceId)?,
        stream_id: f.required_int(Field::StreamId)?,
        context_id: f.required_int(Field::ContextId)?,
        correlation_id: f.required_int(Field::CorrelationId)?,
        start_ns: f.required_int(Field::StartNs)?,
        end_ns: f.required_int(Field::EndNs)?,
        graph_id: f.int_or_zero(Field::GraphId)?,
        graph_node_id: f.int_or_zero(Field::GraphNodeId)?,
        name,
        annotation: match f.get(Field::Annotation) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.clone()),
        },
        detail,
    })))
}

fn api_event(f: &Fields, domain: ApiDomain) -> Result<MergeEvent, String> {
    let cbid = f.required_int(Field::Cbid)?;
    let registered = crate::api_rules::is_registered(domain, &domain.name(cbid));
    let (start_ns, end_ns) = if registered {
        (
            f.required_int(Field::StartNs)?,
            f.required_int(Field::EndNs)?,
        )
    } else {
        (0, 0)
    };
    Ok(MergeEvent::Api(ApiEvent {
        domain,
        cbid,
        process_id: f.required_int(Field::ProcessId)?,
        thread_id: f.required_int(Field::ThreadId)?,
        correlation_id: f.required_int(Field::CorrelationId)?,
        registered,
        start_ns,
        end_ns,
        end_ns_get: f.int_or_zero(Field::EndNs)?,
    }))
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
    })
}
