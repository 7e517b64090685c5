//! The record encoder: typed records to CUPTI's byte layout for a given version. Used by
//! round-trip tests, benchmarks and the fake libcupti that tests the live monitor.
//! Padding, reserved fields and fields the target version lacks are written as zeros
//! (a field the target struct does not have is dropped).

use crate::bytes::put;
use crate::layout::fields::{
    api, cuda_event as ev, external_correlation as xc, kernel as k, memcpy as mc, memset as ms,
    overhead as oh, synchronization as sy,
};
use crate::record::Record;
use crate::Layout;

/// The output slice cannot hold the record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {kind} record needs {needed} bytes but only {available} are free in the buffer")]
pub struct BufferFull {
    pub kind: crate::ActivityKind,
    pub needed: usize,
    pub available: usize,
}

/// Appends records to a growing buffer in one CUPTI version's layout.
///
/// ```
/// use cupmon_records::{Layout, Record, RecordWriter, ExternalCorrelationRecord, RecordIter};
/// let mut w = RecordWriter::new(Layout::cupti_13_0());
/// w.push(&Record::ExternalCorrelation(ExternalCorrelationRecord {
///     external_kind: 5, external_id: 1000, correlation_id: 7 }));
/// let back: Vec<_> = RecordIter::new(w.as_bytes(), w.layout()).collect::<Result<_, _>>().unwrap();
/// assert_eq!(back.len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct RecordWriter {
    layout: Layout,
    buf: Vec<u8>,
}

impl RecordWriter {
    pub fn new(layout: Layout) -> Self {
        Self {
            layout,
            buf: Vec::new(),
        }
    }

    /// A writer whose buffer has room for `bytes` without reallocating.
    pub fn with_capacity(layout: Layout, bytes: usize) -> Self {
        Self {
            layout,
            buf: Vec::with_capacity(bytes),
        }
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Append one record (8-byte aligned, as CUPTI packs them). Returns its offset.
    pub fn push(&mut self, record: &Record) -> usize {
        let offset = self.buf.len();
        let size = self.layout.struct_layout(record.kind()).size;
        self.buf.resize(offset + size.next_multiple_of(8), 0);
        write_fields(record, &mut self.buf[offset..offset + size], self.layout);
        offset
    }

    /// Bytes written so far (what a completed CUPTI buffer's valid bytes would be).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Forget the records, keeping the allocation.
    pub fn clear(&mut self) {
        self.buf.clear();
    }
}

/// Size in bytes `record` takes in `layout` (including alignment padding).
pub fn encoded_size(record: &Record, layout: Layout) -> usize {
    layout.struct_layout(record.kind()).size.next_multiple_of(8)
}

/// Encode `record` at the start of `out` (e.g. a buffer CUPTI would have handed out);
/// returns the bytes used. Fails, writing nothing, when `out` is too small.
pub fn encode_record(record: &Record, layout: Layout, out: &mut [u8]) -> Result<usize, BufferFull> {
    let needed = encoded_size(record, layout);
    let available = out.len();
    let Some(dst) = out.get_mut(..needed) else {
        return Err(BufferFull {
            kind: record.kind(),
            needed,
            available,
        });
    };
    dst.fill(0);
    let size = layout.struct_layout(record.kind()).size;
    write_fields(record, &mut dst[..size], layout);
    Ok(needed)
}

/// Write every field of `record` into `b` (zeroed, exactly the struct's size).
fn write_fields(record: &Record, b: &mut [u8], layout: Layout) {
    put(b, 0, &record.kind().as_u32().to_le_bytes());
    let device_launched = layout.table().memop_device_launched;
    match record {
        Record::Api(r) => {
            put(b, api::CBID, &r.cbid.to_le_bytes());
            put(b, api::START, &r.start.to_le_bytes());
            put(b, api::END, &r.end.to_le_bytes());
            put(b, api::PROCESS_ID, &r.process_id.to_le_bytes());
            put(b, api::THREAD_ID, &r.thread_id.to_le_bytes());
            put(b, api::CORRELATION_ID, &r.correlation_id.to_le_bytes());
            put(b, api::RETURN_VALUE, &r.return_value.to_le_bytes());
        }
        Record::Kernel(r) => {
            put(b, k::CACHE_CONFIG, &[r.cache_config]);
            put(b, k::SHARED_MEMORY_CONFIG, &[r.shared_memory_config]);
            put(
                b,
                k::REGISTERS_PER_THREAD,
                &r.registers_per_thread.to_le_bytes(),
            );
            let pgc = r.partitioned_global_cache_requested.to_le_bytes();
            put(b, k::PARTITIONED_GLOBAL_CACHE_REQUESTED, &pgc);
            let pgc = r.partitioned_global_cache_executed.to_le_bytes();
            put(b, k::PARTITIONED_GLOBAL_CACHE_EXECUTED, &pgc);
            put(b, k::START, &r.start.to_le_bytes());
            put(b, k::END, &r.end.to_le_bytes());
            put(b, k::COMPLETED, &r.completed.to_le_bytes());
            put(b, k::DEVICE_ID, &r.device_id.to_le_bytes());
            put(b, k::CONTEXT_ID, &r.context_id.to_le_bytes());
            put(b, k::STREAM_ID, &r.stream_id.to_le_bytes());
            for (i, o) in [k::GRID_X, k::GRID_Y, k::GRID_Z].into_iter().enumerate() {
                put(b, o, &r.grid[i].to_le_bytes());
            }
            for (i, o) in [k::BLOCK_X, k::BLOCK_Y, k::BLOCK_Z].into_iter().enumerate() {
                put(b, o, &r.block[i].to_le_bytes());
            }
            put(
                b,
                k::STATIC_SHARED_MEMORY,
                &r.static_shared_memory.to_le_bytes(),
            );
            put(
                b,
                k::DYNAMIC_SHARED_MEMORY,
                &r.dynamic_shared_memory.to_le_bytes(),
            );
            put(
                b,
                k::LOCAL_MEMORY_PER_THREAD,
                &r.local_memory_per_thread.to_le_bytes(),
            );
            put(
                b,
                k::LOCAL_MEMORY_TOTAL,
                &r.local_memory_total.to_le_bytes(),
            );
            put(b, k::CORRELATION_ID, &r.correlation_id.to_le_bytes());
            put(b, k::GRID_ID, &r.grid_id.to_le_bytes());
            put(b, k::NAME, &r.name_ptr.to_le_bytes());
            put(b, k::QUEUED, &r.queued.to_le_bytes());
            put(b, k::SUBMITTED, &r.submitted.to_le_bytes());
            put(b, k::LAUNCH_TYPE, &[r.launch_type]);
            let carveout = [r.is_shared_memory_carveout_requested];
            put(b, k::IS_SHARED_MEMORY_CARVEOUT_REQUESTED, &carveout);
            put(
                b,
                k::SHARED_MEMORY_CARVEOUT_REQUESTED,
                &[r.shared_memory_carveout_requested],
            );
            put(
                b,
                k::SHARED_MEMORY_EXECUTED,
                &r.shared_memory_executed.to_le_bytes(),
            );
            put(b, k::GRAPH_NODE_ID, &r.graph_node_id.to_le_bytes());
            put(
                b,
                k::SHMEM_LIMIT_CONFIG,
                &r.shmem_limit_config.to_le_bytes(),
            );
            put(b, k::GRAPH_ID, &r.graph_id.to_le_bytes());
            put(b, k::CHANNEL_ID, &r.channel_id.to_le_bytes());
            put(b, k::CHANNEL_TYPE, &r.channel_type.to_le_bytes());
            for (i, o) in [k::CLUSTER_X, k::CLUSTER_Y, k::CLUSTER_Z]
                .into_iter()
                .enumerate()
            {
                put(b, o, &r.cluster[i].to_le_bytes());
            }
            let policy = r.cluster_scheduling_policy.to_le_bytes();
            put(b, k::CLUSTER_SCHEDULING_POLICY, &policy);
            put(
                b,
                k::LOCAL_MEMORY_TOTAL_V2,
                &r.local_memory_total_v2.to_le_bytes(),
            );
            let max_size = r.max_potential_cluster_size.to_le_bytes();
            put(b, k::MAX_POTENTIAL_CLUSTER_SIZE, &max_size);
            put(
                b,
                k::MAX_ACTIVE_CLUSTERS,
                &r.max_active_clusters.to_le_bytes(),
            );
            put(b, k::IS_DEVICE_LAUNCHED, &[r.is_device_launched]);
            put(b, k::PRIORITY, &r.priority.to_le_bytes());
            put(b, k::EXECUTION_MODEL, &r.execution_model.to_le_bytes());
            put(b, k::SOURCE_GRAPH_ID, &r.source_graph_id.to_le_bytes());
            put(
                b,
                k::SOURCE_GRAPH_NODE_ID,
                &r.source_graph_node_id.to_le_bytes(),
            );
        }
        Record::Memcpy(r) => {
            put(
                b,
                mc::COPY_KIND,
                &[r.copy_kind, r.src_kind, r.dst_kind, r.flags],
            );
            put(b, mc::BYTES, &r.bytes.to_le_bytes());
            put(b, mc::START, &r.start.to_le_bytes());
            put(b, mc::END, &r.end.to_le_bytes());
            put(b, mc::DEVICE_ID, &r.device_id.to_le_bytes());
            put(b, mc::CONTEXT_ID, &r.context_id.to_le_bytes());
            put(b, mc::STREAM_ID, &r.stream_id.to_le_bytes());
            put(b, mc::CORRELATION_ID, &r.correlation_id.to_le_bytes());
            put(
                b,
                mc::RUNTIME_CORRELATION_ID,
                &r.runtime_correlation_id.to_le_bytes(),
            );
            put(b, mc::GRAPH_NODE_ID, &r.graph_node_id.to_le_bytes());
            put(b, mc::GRAPH_ID, &r.graph_id.to_le_bytes());
            put(b, mc::CHANNEL_ID, &r.channel_id.to_le_bytes());
            put(b, mc::CHANNEL_TYPE, &r.channel_type.to_le_bytes());
            if device_launched {
                put(b, mc::IS_DEVICE_LAUNCHED, &[r.is_device_launched]);
            }
            put(b, mc::COPY_COUNT, &r.copy_count.to_le_bytes());
            put(b, mc::SOURCE_GRAPH_ID, &r.source_graph_id.to_le_bytes());
            put(
                b,
                mc::SOURCE_GRAPH_NODE_ID,
                &r.source_graph_node_id.to_le_bytes(),
            );
        }
        Record::Memset(r) => {
            put(b, ms::VALUE, &r.value.to_le_bytes());
            put(b, ms::BYTES, &r.bytes.to_le_bytes());
            put(b, ms::START, &r.start.to_le_bytes());
            put(b, ms::END, &r.end.to_le_bytes());
            put(b, ms::DEVICE_ID, &r.device_id.to_le_bytes());
            put(b, ms::CONTEXT_ID, &r.context_id.to_le_bytes());
            put(b, ms::STREAM_ID, &r.stream_id.to_le_bytes());
            put(b, ms::CORRELATION_ID, &r.correlation_id.to_le_bytes());
            put(b, ms::FLAGS, &r.flags.to_le_bytes());
            put(b, ms::MEMORY_KIND, &r.memory_kind.to_le_bytes());
            put(b, ms::GRAPH_NODE_ID, &r.graph_node_id.to_le_bytes());
            put(b, ms::GRAPH_ID, &r.graph_id.to_le_bytes());
            put(b, ms::CHANNEL_ID, &r.channel_id.to_le_bytes());
            put(b, ms::CHANNEL_TYPE, &r.channel_type.to_le_bytes());
            if device_launched {
                put(b, ms::IS_DEVICE_LAUNCHED, &[r.is_device_launched]);
            }
            put(b, ms::SOURCE_GRAPH_ID, &r.source_graph_id.to_le_bytes());
            put(
                b,
                ms::SOURCE_GRAPH_NODE_ID,
                &r.source_graph_node_id.to_le_bytes(),
            );
        }
        Record::ExternalCorrelation(r) => {
            put(b, xc::EXTERNAL_KIND, &r.external_kind.to_le_bytes());
            put(b, xc::EXTERNAL_ID, &r.external_id.to_le_bytes());
            put(b, xc::CORRELATION_ID, &r.correlation_id.to_le_bytes());
        }
        Record::Overhead(r) => {
            put(b, oh::OVERHEAD_KIND, &r.overhead_kind.to_le_bytes());
            put(b, oh::OBJECT_KIND, &r.object_kind.to_le_bytes());
            for (i, id) in r.object_id.iter().enumerate() {
                put(b, oh::OBJECT_ID + 4 * i, &id.to_le_bytes());
            }
            put(b, oh::START, &r.start.to_le_bytes());
            put(b, oh::END, &r.end.to_le_bytes());
            put(b, oh::CORRELATION_ID, &r.correlation_id.to_le_bytes());
            put(b, oh::OVERHEAD_DATA, &r.overhead_data.to_le_bytes());
        }
        Record::CudaEvent(r) => {
            put(b, ev::CORRELATION_ID, &r.correlation_id.to_le_bytes());
            put(b, ev::CONTEXT_ID, &r.context_id.to_le_bytes());
            put(b, ev::STREAM_ID, &r.stream_id.to_le_bytes());
            put(b, ev::EVENT_ID, &r.event_id.to_le_bytes());
            put(b, ev::DEVICE_ID, &r.device_id.to_le_bytes());
            put(b, ev::DEVICE_TIMESTAMP, &r.device_timestamp.to_le_bytes());
            put(
                b,
                ev::CUDA_EVENT_SYNC_ID,
                &r.cuda_event_sync_id.to_le_bytes(),
            );
            put(b, ev::GRAPH_NODE_ID, &r.graph_node_id.to_le_bytes());
            put(b, ev::GRAPH_ID, &r.graph_id.to_le_bytes());
            put(b, ev::SOURCE_GRAPH_ID, &r.source_graph_id.to_le_bytes());
            put(
                b,
                ev::SOURCE_GRAPH_NODE_ID,
                &r.source_graph_node_id.to_le_bytes(),
            );
        }
        Record::Synchronization(r) => {
            put(b, sy::TYPE, &r.sync_type.to_le_bytes());
            put(b, sy::START, &r.start.to_le_bytes());
            put(b, sy::END, &r.end.to_le_bytes());
            put(b, sy::CORRELATION_ID, &r.correlation_id.to_le_bytes());
            put(b, sy::CONTEXT_ID, &r.context_id.to_le_bytes());
            put(b, sy::STREAM_ID, &r.stream_id.to_le_bytes());
            put(b, sy::CUDA_EVENT_ID, &r.cuda_event_id.to_le_bytes());
            put(
                b,
                sy::CUDA_EVENT_SYNC_ID,
                &r.cuda_event_sync_id.to_le_bytes(),
            );
            put(b, sy::RETURN_VALUE, &r.return_value.to_le_bytes());
        }
    }
}
