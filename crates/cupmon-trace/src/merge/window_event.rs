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
    TimestampNs,
    Operation,
    Address,
    IsAsync,
    PoolType,
    PoolAddress,
    PoolSize,
    PoolUtilizedSize,
    Size,
    UtilizedSize,
    ReleaseThreshold,
    MinBytesToKeep,
    IsManagedPool,
}

const FIELDS: [(&str, Field); 42] = [
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
    ("timestamp_ns", Field::TimestampNs),
    ("operation", Field::Operation),
    ("address", Field::Address),
    ("is_async", Field::IsAsync),
    ("pool_type", Field::PoolType),
    ("pool_address", Field::PoolAddress),
    ("pool_size", Field::PoolSize),
    ("pool_utilized_size", Field::PoolUtilizedSize),
    ("size", Field::Size),
    ("utilized_size", Field::UtilizedSize),
    ("release_threshold", Field::ReleaseThreshold),
    ("min_bytes_to_keep", Field::MinBytesToKeep),
    ("is_managed_pool", Field::IsManagedPool),
];

fn field_name(f: Field) -> &'static str {
    FIELDS[f as usize].0
}

/// The raw fields of one event object.
pub(super) struct Fields([Option<Value>; 42]);

impl Fields {
    fn get(&self, f: Field) -> Option<&Value> {
        self.0[f as usize].as_ref()
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
    r.pos += 1;
    let mut fields = Fields(std::array::from_fn(|_| None));
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
                fields.0[f as usize] = Some(v);
            }
            None => r.skip_value()?,
        }
        if !r.comma_or(b'}')? {
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
        "gpu_memory" | "gpu_memory_pool" => match extra_event(kind, f) {
            Some(e) => MergeEvent::Extra(Box::new(e)),
            None => MergeEvent::Other {
                end_ns: f.int_or_zero(Field::EndNs)?,
            },
        },
        _ => MergeEvent::Other {
            end_ns: f.int_or_zero(Field::EndNs)?,
        },
    })
}

/// A field as an unsigned or signed integer, if it is one.
fn u64_of(f: &Fields, field: Field) -> Option<u64> {
    match f.get(field)? {
        Value::Int(i) => u64::try_from(*i).ok(),
        Value::Bool(b) => Some(u64::from(*b)),
        _ => None,
    }
}

/// cupmon's memory kinds, which PyTorch's merge does not know (an unknown kind to it,
/// without `end_ns`); `None` when a field is missing (the event is then only that).
fn extra_event(kind: &str, f: &Fields) -> Option<crate::WindowEvent> {
    let u32_of = |field| u64_of(f, field).and_then(|v| u32::try_from(v).ok());
    let name = match f.get(Field::Name) {
        Some(Value::Str(s)) => s.clone(),
        _ => String::new(),
    };
    Some(if kind == "gpu_memory" {
        crate::WindowEvent::Memory(crate::MemoryEvent {
            device_id: u32_of(Field::DeviceId)?,
            context_id: u32_of(Field::ContextId).unwrap_or(0),
            stream_id: u32_of(Field::StreamId).unwrap_or(0),
            correlation_id: u32_of(Field::CorrelationId).unwrap_or(0),
            timestamp_ns: u64_of(f, Field::TimestampNs)?,
            operation: u32_of(Field::Operation)?,
            memory_kind: u32_of(Field::MemoryKind).unwrap_or(0),
            address: u64_of(f, Field::Address)?,
            bytes: u64_of(f, Field::Bytes)?,
            process_id: u32_of(Field::ProcessId).unwrap_or(0),
            is_async: u64_of(f, Field::IsAsync).unwrap_or(0) != 0,
            pool_type: u32_of(Field::PoolType).unwrap_or(0),
            pool_address: u64_of(f, Field::PoolAddress).unwrap_or(0),
            pool_size: u64_of(f, Field::PoolSize).unwrap_or(0),
            pool_utilized_size: u64_of(f, Field::PoolUtilizedSize).unwrap_or(0),
            name,
        })
    } else {
        crate::WindowEvent::MemoryPool(crate::MemoryPoolEvent {
            device_id: u32_of(Field::DeviceId)?,
            process_id: u32_of(Field::ProcessId).unwrap_or(0),
            correlation_id: u32_of(Field::CorrelationId).unwrap_or(0),
            timestamp_ns: u64_of(f, Field::TimestampNs)?,
            operation: u32_of(Field::Operation)?,
            pool_type: u32_of(Field::PoolType).unwrap_or(0),
            address: u64_of(f, Field::Address)?,
            size: u64_of(f, Field::Size).unwrap_or(0),
            release_threshold: u64_of(f, Field::ReleaseThreshold).unwrap_or(0),
            utilized_size: u64_of(f, Field::UtilizedSize).unwrap_or(0),
            min_bytes_to_keep: u64_of(f, Field::MinBytesToKeep).unwrap_or(0),
            is_managed_pool: u64_of(f, Field::IsManagedPool).unwrap_or(0) != 0,
            name,
        })
    })
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
