//! Helpers shared by the integration tests: fixture paths and a JSON view of records
//! with the field names of the fixtures' `truth.jsonl`.
#![allow(dead_code)]

use std::path::PathBuf;

use cupmon_records::{walk_records, DecodeReport, Dump, DumpError, Record};
use serde_json::{json, Value};

pub const FIXTURES: [&str; 2] = ["cuda_workload", "torch_mlp"];

/// The repo's copy of the real H200 recordings.
pub fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(name)
}

/// A copy of a fixture's dump whose raw-buffer file is `edit`ed.
pub fn damaged_copy(fixture: &str, edit: impl FnOnce(&mut Vec<u8>)) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(fixture_dir(fixture)).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), tmp.path().join(f.file_name())).unwrap();
    }
    let raw = tmp.path().join(cupmon_records::dump::RAW_BUFFERS_FILE);
    let mut bytes = std::fs::read(&raw).unwrap();
    edit(&mut bytes);
    std::fs::write(&raw, bytes).unwrap();
    tmp
}

/// The records of each chunk of the dump in `dir` (by the chunk's number), and the report.
pub fn records_by_chunk(
    dir: impl AsRef<std::path::Path>,
) -> Result<(Vec<Vec<Record>>, DecodeReport), DumpError> {
    let dump = Dump::open(dir)?;
    let mut chunks: Vec<Vec<Record>> = Vec::new();
    let report = walk_records(
        &dump,
        |_| {},
        |chunk, _, r| {
            let chunk = chunk as usize;
            if chunks.len() <= chunk {
                chunks.resize(chunk + 1, Vec::new());
            }
            chunks[chunk].push(r.clone());
        },
    )?;
    Ok((chunks, report))
}

/// A meta file's bytes with `json` as its payload.
pub fn meta_with(json: &str) -> Vec<u8> {
    let mut b = b"CUPMMETA".to_vec();
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&(json.len() as u32).to_le_bytes());
    b.extend_from_slice(json.as_bytes());
    b
}

/// Every record of the dump in `dir`, in buffer order, and the decode report.
pub fn decode_all(
    dir: impl AsRef<std::path::Path>,
) -> Result<(Vec<Record>, DecodeReport), DumpError> {
    let dump = Dump::open(dir)?;
    let mut records = Vec::new();
    let report = walk_records(&dump, |_| {}, |_, _, r| records.push(r.clone()))?;
    Ok((records, report))
}

/// A record's fields under truth.jsonl's names.
pub fn truth_view(record: &Record) -> Value {
    match record {
        Record::Kernel(r) => json!({
            "kind": record.kind().as_u32(),
            "start": r.start, "end": r.end, "completed": r.completed,
            "device_id": r.device_id, "context_id": r.context_id, "stream_id": r.stream_id,
            "grid": r.grid(), "block": r.block(), "registers_per_thread": r.registers_per_thread,
            "static_shared_memory": r.static_shared_memory,
            "dynamic_shared_memory": r.dynamic_shared_memory,
            "correlation_id": r.correlation_id, "grid_id": r.grid_id, "queued": r.queued,
            "submitted": r.submitted, "launch_type": r.launch_type,
            "graph_node_id": r.graph_node_id, "graph_id": r.graph_id,
            "channel_id": r.channel_id, "channel_type": r.channel_type, "cluster": r.cluster(),
            "is_device_launched": r.is_device_launched, "name_ptr": r.name_ptr,
        }),
        Record::Memcpy(r) => json!({
            "kind": 1, "copy_kind": r.copy_kind, "src_kind": r.src_kind, "dst_kind": r.dst_kind,
            "flags": r.flags, "bytes": r.bytes, "start": r.start, "end": r.end,
            "device_id": r.device_id, "context_id": r.context_id, "stream_id": r.stream_id,
            "correlation_id": r.correlation_id, "runtime_correlation_id": r.runtime_correlation_id,
            "graph_node_id": r.graph_node_id, "graph_id": r.graph_id, "channel_id": r.channel_id,
            "channel_type": r.channel_type, "is_device_launched": r.is_device_launched,
            "copy_count": r.copy_count,
        }),
        Record::Memset(r) => json!({
            "kind": 2, "value": r.value, "bytes": r.bytes, "start": r.start, "end": r.end,
            "device_id": r.device_id, "context_id": r.context_id, "stream_id": r.stream_id,
            "correlation_id": r.correlation_id, "flags": r.flags, "memory_kind": r.memory_kind,
            "graph_node_id": r.graph_node_id, "graph_id": r.graph_id, "channel_id": r.channel_id,
            "channel_type": r.channel_type, "is_device_launched": r.is_device_launched,
        }),
        Record::Api(r) => json!({
            "kind": record.kind().as_u32(), "cbid": r.cbid, "start": r.start, "end": r.end,
            "process_id": r.process_id, "thread_id": r.thread_id,
            "correlation_id": r.correlation_id, "return_value": r.return_value,
        }),
        Record::ExternalCorrelation(r) => json!({
            "kind": 39, "external_kind": r.external_kind, "external_id": r.external_id,
            "correlation_id": r.correlation_id,
        }),
        Record::Overhead(r) => json!({
            "kind": 17, "overhead_kind": r.overhead_kind, "object_kind": r.object_kind,
            "object_id": r.object_id, "start": r.start, "end": r.end,
            "correlation_id": r.correlation_id,
        }),
        Record::CudaEvent(r) => json!({
            "kind": 36, "correlation_id": r.correlation_id, "context_id": r.context_id,
            "stream_id": r.stream_id, "event_id": r.event_id, "device_id": r.device_id,
            "device_timestamp": r.device_timestamp, "cuda_event_sync_id": r.cuda_event_sync_id,
        }),
        Record::Memory(r) => json!({
            "kind": 49, "operation": r.operation, "memory_kind": r.memory_kind,
            "address": r.address, "bytes": r.bytes, "timestamp": r.timestamp,
            "device_id": r.device_id, "stream_id": r.stream_id,
            "correlation_id": r.correlation_id,
        }),
        Record::MemoryPool(r) => json!({
            "kind": 50, "operation": r.operation, "pool_type": r.pool_type,
            "address": r.address, "size": r.size, "timestamp": r.timestamp,
            "device_id": r.device_id, "correlation_id": r.correlation_id,
        }),
        Record::Synchronization(r) => json!({
            "kind": 38, "sync_type": r.sync_type, "start": r.start, "end": r.end,
            "correlation_id": r.correlation_id, "context_id": r.context_id,
            "stream_id": r.stream_id, "cuda_event_id": r.cuda_event_id,
            "cuda_event_sync_id": r.cuda_event_sync_id, "return_value": r.return_value,
        }),
    }
}
