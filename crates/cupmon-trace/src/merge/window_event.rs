//! One event of a trace window: the fields the merge reads, and the event
//! built from them with PyTorch's merge's own rules (`_as_int`, `str()`, which
//! fields it requires for which kind).

use super::window_input::{
    ApiEvent, ExternalCorrelation, GpuDetail, GpuEvent, GpuKind, KernelLaunch, Lazy, MergeEvent,
    OverheadEvent,
};
use crate::json::read::{ReadResult, Reader};
use crate::json::value::Value;
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
    Grid,
    Block,
    RegistersPerThread,
    StaticSharedMemory,
    DynamicSharedMemory,
    QueuedNs,
}

const FIELDS: [(&str, Field); 29] = [
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
    ("grid", Field::Grid),
    ("block", Field::Block),
    ("registers_per_thread", Field::RegistersPerThread),
    ("static_shared_memory", Field::StaticSharedMemory),
    ("dynamic_shared_memory", Field::DynamicSharedMemory),
    ("queued_ns", Field::QueuedNs),
];

fn field_name(f: Field) -> &'static str {
    FIELDS[f as usize].0
}

/// The raw fields of one event object.
pub(super) struct Fields {
    values: [Option<Value>; 29],
    /// A kind the merge does not read itself (cupmon's memory kinds, any kind
    /// added), read as the window model reads it; `None` when it is not one.
    typed: Option<crate::WindowEvent>,
}

impl Fields {
    fn get(&self, f: Field) -> Option<&Value> {
        self.values[f as usize].as_ref()
    }

    /// `_as_int(event[f])`: PyTorch's merge raises KeyError when the field is missing.
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

/// PyTorch's merge's `_as_int`: `int(v)`, 0 where that raises TypeError/ValueError.
fn as_int(v: &Value) -> Result<i128, String> {
    v.py_int().map(|i| i.unwrap_or(0))
}

/// The fields of one event; `None` when the element is not an object.
pub(super) fn read_fields(r: &mut Reader<'_>) -> ReadResult<Option<Fields>> {
    if r.peek()? != b'{' {
        r.skip_value()?;
        return Ok(None);
    }
    let start = r.pos;
    r.pos += 1;
    let mut fields = Fields {
        values: std::array::from_fn(|_| None),
        typed: None,
    };
    if r.empty_close(b'}')? {
        return Ok(Some(fields));
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
                fields.values[f as usize] = Some(v);
            }
            None => r.skip_value()?,
        }
        if !r.comma_or(b'}')? {
            fields.typed = typed_extra(&fields, &r.b[start..r.pos]);
            return Ok(Some(fields));
        }
    }
}

pub(super) fn build_event(f: &Fields) -> Result<MergeEvent, String> {
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
        _ => match f.typed.as_ref().map(MergeEvent::from) {
            Some(extra @ MergeEvent::Extra(_)) => extra,
            _ => MergeEvent::Other {
                end_ns: f.int_or_zero(Field::EndNs)?,
            },
        },
    })
}

/// The kinds whose fields the merge reads itself (PyTorch's merge's rules).
const MERGE_KINDS: [&str; 7] = [
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "cuda_runtime",
    "cuda_driver",
    "overhead",
    "external_correlation",
];

/// An event of another kind as the window model reads it (its serde form, by
/// `kind`), so that a kind added to the window model needs nothing here: the
/// kinds PyTorch's merge does not know become [`MergeEvent::Extra`], shown by
/// complete traces (`kinds_out.rs`). `None` for the merge's own kinds, and for
/// an event the window model cannot read (it stays what PyTorch's merge makes of
/// an unknown kind).
fn typed_extra(f: &Fields, text: &[u8]) -> Option<crate::WindowEvent> {
    match f.get(Field::Kind)? {
        Value::Str(kind) if !MERGE_KINDS.contains(&kind.as_str()) => {
            serde_json::from_slice(text).ok()
        }
        _ => None,
    }
}

/// A kernel's launch configuration when the window carries it (cupmon's do).
fn launch_of(f: &Fields) -> Option<Box<KernelLaunch>> {
    let three = |field| -> Option<[i32; 3]> {
        let Some(Value::Array(items)) = f.get(field) else {
            return None;
        };
        let mut out = [0i32; 3];
        for (slot, v) in out.iter_mut().zip(items) {
            *slot = match v {
                Value::Int(i) => i32::try_from(*i).ok()?,
                _ => return None,
            };
        }
        (items.len() == 3).then_some(out)
    };
    let int = |field| match f.get(field) {
        Some(Value::Int(i)) => i32::try_from(*i).ok(),
        _ => None,
    };
    Some(Box::new(KernelLaunch {
        config: crate::LaunchConfig {
            grid: three(Field::Grid)?,
            block: three(Field::Block)?,
            registers_per_thread: u16::try_from(int(Field::RegistersPerThread)?).ok()?,
            static_shared_memory: int(Field::StaticSharedMemory).unwrap_or(0),
            dynamic_shared_memory: int(Field::DynamicSharedMemory).unwrap_or(0),
        },
        queued_ns: match f.get(Field::QueuedNs) {
            Some(Value::Int(i)) => *i,
            _ => 0,
        },
    }))
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
        launch: if kind == GpuKind::Kernel {
            launch_of(f)
        } else {
            None
        },
        detail,
    })))
}

fn api_event(f: &Fields, domain: ApiDomain) -> Result<MergeEvent, String> {
    let cbid = f.required_int(Field::Cbid)?;
    let registered = crate::is_registered(domain, &domain.name(cbid));
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
