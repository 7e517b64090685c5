//! The record decoder: walks an activity buffer (records packed back to back, 8-byte
//! aligned, each starting with its `u32` kind) and yields typed records by value, with
//! no allocation. Any input is safe: an unknown kind or a record running past the end
//! is an error naming the offset, after which the iterator ends.

use cupmon_trace::ApiDomain;

use crate::bytes::{i32_at, opt_u32, opt_u64, opt_u8, u16_at, u32_at, u64_at, u8_at};
use crate::layout::fields::{
    api, cuda_event as ev, external_correlation as xc, kernel as k, memcpy as mc, memset as ms,
    overhead as oh, synchronization as sy,
};
use crate::record::{
    ApiRecord, CudaEventRecord, ExternalCorrelationRecord, KernelRecord, MemcpyRecord,
    MemsetRecord, OverheadRecord, Record, SyncRecord,
};
use crate::{ActivityKind, CuptiVersion, Layout};

/// Why a buffer could not be decoded past `offset`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("record at offset {offset}: unknown activity kind {kind} for CUPTI {version}")]
    UnknownKind {
        offset: usize,
        kind: u32,
        version: CuptiVersion,
    },
    #[error(
        "record at offset {offset}: {kind} record of {size} bytes runs past the buffer end \
         ({available} bytes left)"
    )]
    Truncated {
        offset: usize,
        kind: ActivityKind,
        size: usize,
        available: usize,
    },
    #[error(
        "record at offset {offset}: {available} trailing bytes, too few to hold a record kind"
    )]
    TrailingBytes { offset: usize, available: usize },
}

impl DecodeError {
    /// Offset within the buffer of the record that failed.
    pub fn offset(&self) -> usize {
        match *self {
            Self::UnknownKind { offset, .. }
            | Self::Truncated { offset, .. }
            | Self::TrailingBytes { offset, .. } => offset,
        }
    }
}

/// Iterator over the records of one activity buffer. Ends after the first error.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    buf: &'a [u8],
    pos: usize,
    layout: Layout,
}

impl<'a> RecordIter<'a> {
    /// Decode `buf` (the valid bytes of one completed buffer) as written by `layout`'s CUPTI.
    pub fn new(buf: &'a [u8], layout: Layout) -> Self {
        Self {
            buf,
            pos: 0,
            layout,
        }
    }

    /// Offset of the next record to be decoded.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Like `next`, also giving the record's offset within the buffer.
    #[inline]
    pub fn next_with_offset(&mut self) -> Option<Result<(usize, Record), DecodeError>> {
        let offset = self.pos;
        self.next().map(|r| r.map(|rec| (offset, rec)))
    }

    /// Yields `(offset, record)` pairs.
    pub fn with_offsets(self) -> WithOffsets<'a> {
        WithOffsets(self)
    }

    #[inline]
    fn fail(&mut self, error: DecodeError) -> Option<Result<Record, DecodeError>> {
        self.pos = self.buf.len();
        Some(Err(error))
    }
}

impl Iterator for RecordIter<'_> {
    type Item = Result<Record, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.buf.get(self.pos..)?;
        let offset = self.pos;
        let Some(&[a, b, c, d]) = rest.get(..4) else {
            if rest.is_empty() {
                return None;
            }
            let available = rest.len();
            return self.fail(DecodeError::TrailingBytes { offset, available });
        };
        let kind = u32::from_le_bytes([a, b, c, d]);
        let Some(size) = self.layout.record_size(kind) else {
            let version = self.layout.version();
            return self.fail(DecodeError::UnknownKind {
                offset,
                kind,
                version,
            });
        };
        let decoded = rest
            .get(..size)
            .and_then(|rec| decode_known(kind, rec, self.layout));
        match decoded {
            Some(record) => {
                self.pos += (size + 7) & !7;
                Some(Ok(record))
            }
            None => {
                let kind = ActivityKind::from_u32(kind).unwrap_or(ActivityKind::Kernel);
                let available = rest.len();
                self.fail(DecodeError::Truncated {
                    offset,
                    kind,
                    size,
                    available,
                })
            }
        }
    }
}

/// [`RecordIter`] yielding `(offset, record)`.
#[derive(Debug, Clone)]
pub struct WithOffsets<'a>(RecordIter<'a>);

impl Iterator for WithOffsets<'_> {
    type Item = Result<(usize, Record), DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next_with_offset()
    }
}

/// Decode the one record at the start of `bytes`; returns it and the offset of the next.
pub fn decode_record(bytes: &[u8], layout: Layout) -> Result<(Record, usize), DecodeError> {
    let mut it = RecordIter::new(bytes, layout);
    match it.next() {
        Some(Ok(record)) => Ok((record, it.offset())),
        Some(Err(e)) => Err(e),
        None => Err(DecodeError::TrailingBytes {
            offset: 0,
            available: 0,
        }),
    }
}

/// Decode one record of a kind cupmon knows, `rec` being exactly the struct's bytes.
/// `None` only if `rec` is shorter than the oldest struct of its kind.
#[inline(always)]
fn decode_known(kind: u32, rec: &[u8], layout: Layout) -> Option<Record> {
    Some(match kind {
        5 => Record::Api(api_record(rec, ApiDomain::Runtime)?),
        4 => Record::Api(api_record(rec, ApiDomain::Driver)?),
        10 => Record::Kernel(kernel(rec, true)?),
        3 => Record::Kernel(kernel(rec, false)?),
        39 => Record::ExternalCorrelation(external_correlation(rec)?),
        1 => Record::Memcpy(memcpy(rec, layout.table().memop_device_launched)?),
        2 => Record::Memset(memset(rec, layout.table().memop_device_launched)?),
        17 => Record::Overhead(overhead(rec)?),
        36 => Record::CudaEvent(cuda_event(rec)?),
        38 => Record::Synchronization(sync(rec)?),
        _ => return None,
    })
}

#[inline(always)]
fn api_record(rec: &[u8], domain: ApiDomain) -> Option<ApiRecord> {
    let b = rec.first_chunk::<40>()?;
    Some(ApiRecord {
        domain,
        cbid: u32_at(b, api::CBID),
        start: u64_at(b, api::START),
        end: u64_at(b, api::END),
        process_id: u32_at(b, api::PROCESS_ID),
        thread_id: u32_at(b, api::THREAD_ID),
        correlation_id: u32_at(b, api::CORRELATION_ID),
        return_value: u32_at(b, api::RETURN_VALUE),
    })
}

#[inline(always)]
fn kernel(rec: &[u8], concurrent: bool) -> Option<KernelRecord> {
    let b = rec.first_chunk::<208>()?;
    Some(KernelRecord {
        concurrent,
        cache_config: u8_at(b, k::CACHE_CONFIG),
        shared_memory_config: u8_at(b, k::SHARED_MEMORY_CONFIG),
        registers_per_thread: u16_at(b, k::REGISTERS_PER_THREAD),
        partitioned_global_cache_requested: u32_at(b, k::PARTITIONED_GLOBAL_CACHE_REQUESTED),
        partitioned_global_cache_executed: u32_at(b, k::PARTITIONED_GLOBAL_CACHE_EXECUTED),
        start: u64_at(b, k::START),
        end: u64_at(b, k::END),
        completed: u64_at(b, k::COMPLETED),
        device_id: u32_at(b, k::DEVICE_ID),
        context_id: u32_at(b, k::CONTEXT_ID),
        stream_id: u32_at(b, k::STREAM_ID),
        grid: [
            i32_at(b, k::GRID_X),
            i32_at(b, k::GRID_Y),
            i32_at(b, k::GRID_Z),
        ],
        block: [
            i32_at(b, k::BLOCK_X),
            i32_at(b, k::BLOCK_Y),
            i32_at(b, k::BLOCK_Z),
        ],
        static_shared_memory: i32_at(b, k::STATIC_SHARED_MEMORY),
        dynamic_shared_memory: i32_at(b, k::DYNAMIC_SHARED_MEMORY),
        local_memory_per_thread: u32_at(b, k::LOCAL_MEMORY_PER_THREAD),
        local_memory_total: u32_at(b, k::LOCAL_MEMORY_TOTAL),
        correlation_id: u32_at(b, k::CORRELATION_ID),
        grid_id: u64_at(b, k::GRID_ID) as i64,
        name_ptr: u64_at(b, k::NAME),
        queued: u64_at(b, k::QUEUED),
        submitted: u64_at(b, k::SUBMITTED),
        launch_type: u8_at(b, k::LAUNCH_TYPE),
        is_shared_memory_carveout_requested: u8_at(b, k::IS_SHARED_MEMORY_CARVEOUT_REQUESTED),
        shared_memory_carveout_requested: u8_at(b, k::SHARED_MEMORY_CARVEOUT_REQUESTED),
        shared_memory_executed: u32_at(b, k::SHARED_MEMORY_EXECUTED),
        graph_node_id: u64_at(b, k::GRAPH_NODE_ID),
        shmem_limit_config: u32_at(b, k::SHMEM_LIMIT_CONFIG),
        graph_id: u32_at(b, k::GRAPH_ID),
        channel_id: u32_at(b, k::CHANNEL_ID),
        channel_type: u32_at(b, k::CHANNEL_TYPE),
        cluster: [
            u32_at(b, k::CLUSTER_X),
            u32_at(b, k::CLUSTER_Y),
            u32_at(b, k::CLUSTER_Z),
        ],
        cluster_scheduling_policy: u32_at(b, k::CLUSTER_SCHEDULING_POLICY),
        local_memory_total_v2: u64_at(b, k::LOCAL_MEMORY_TOTAL_V2),
        max_potential_cluster_size: u32_at(b, k::MAX_POTENTIAL_CLUSTER_SIZE),
        max_active_clusters: u32_at(b, k::MAX_ACTIVE_CLUSTERS),
        is_device_launched: opt_u8(rec, k::IS_DEVICE_LAUNCHED),
        priority: opt_u32(rec, k::PRIORITY) as i32,
        execution_model: opt_u32(rec, k::EXECUTION_MODEL),
        source_graph_id: opt_u32(rec, k::SOURCE_GRAPH_ID),
        source_graph_node_id: opt_u64(rec, k::SOURCE_GRAPH_NODE_ID),
    })
}

#[inline(always)]
fn memcpy(rec: &[u8], device_launched: bool) -> Option<MemcpyRecord> {
    let b = rec.first_chunk::<88>()?;
    Some(MemcpyRecord {
        copy_kind: u8_at(b, mc::COPY_KIND),
        src_kind: u8_at(b, mc::SRC_KIND),
        dst_kind: u8_at(b, mc::DST_KIND),
        flags: u8_at(b, mc::FLAGS),
        bytes: u64_at(b, mc::BYTES),
        start: u64_at(b, mc::START),
        end: u64_at(b, mc::END),
        device_id: u32_at(b, mc::DEVICE_ID),
        context_id: u32_at(b, mc::CONTEXT_ID),
        stream_id: u32_at(b, mc::STREAM_ID),
        correlation_id: u32_at(b, mc::CORRELATION_ID),
        runtime_correlation_id: u32_at(b, mc::RUNTIME_CORRELATION_ID),
        graph_node_id: u64_at(b, mc::GRAPH_NODE_ID),
        graph_id: u32_at(b, mc::GRAPH_ID),
        channel_id: u32_at(b, mc::CHANNEL_ID),
        channel_type: u32_at(b, mc::CHANNEL_TYPE),
        is_device_launched: if device_launched {
            u8_at(b, mc::IS_DEVICE_LAUNCHED)
        } else {
            0
        },
        copy_count: opt_u64(rec, mc::COPY_COUNT),
        source_graph_id: opt_u32(rec, mc::SOURCE_GRAPH_ID),
        source_graph_node_id: opt_u64(rec, mc::SOURCE_GRAPH_NODE_ID),
    })
}

#[inline(always)]
fn memset(rec: &[u8], device_launched: bool) -> Option<MemsetRecord> {
    let b = rec.first_chunk::<88>()?;
    Some(MemsetRecord {
        value: u32_at(b, ms::VALUE),
        bytes: u64_at(b, ms::BYTES),
        start: u64_at(b, ms::START),
        end: u64_at(b, ms::END),
        device_id: u32_at(b, ms::DEVICE_ID),
        context_id: u32_at(b, ms::CONTEXT_ID),
        stream_id: u32_at(b, ms::STREAM_ID),
        correlation_id: u32_at(b, ms::CORRELATION_ID),
        flags: u16_at(b, ms::FLAGS),
        memory_kind: u16_at(b, ms::MEMORY_KIND),
        graph_node_id: u64_at(b, ms::GRAPH_NODE_ID),
        graph_id: u32_at(b, ms::GRAPH_ID),
        channel_id: u32_at(b, ms::CHANNEL_ID),
        channel_type: u32_at(b, ms::CHANNEL_TYPE),
        is_device_launched: if device_launched {
            u8_at(b, ms::IS_DEVICE_LAUNCHED)
        } else {
            0
        },
        source_graph_id: opt_u32(rec, ms::SOURCE_GRAPH_ID),
        source_graph_node_id: opt_u64(rec, ms::SOURCE_GRAPH_NODE_ID),
    })
}

#[inline(always)]
fn external_correlation(rec: &[u8]) -> Option<ExternalCorrelationRecord> {
    let b = rec.first_chunk::<24>()?;
    Some(ExternalCorrelationRecord {
        external_kind: u32_at(b, xc::EXTERNAL_KIND),
        external_id: u64_at(b, xc::EXTERNAL_ID),
        correlation_id: u32_at(b, xc::CORRELATION_ID),
    })
}

#[inline(always)]
fn overhead(rec: &[u8]) -> Option<OverheadRecord> {
    let b = rec.first_chunk::<40>()?;
    Some(OverheadRecord {
        overhead_kind: u32_at(b, oh::OVERHEAD_KIND),
        object_kind: u32_at(b, oh::OBJECT_KIND),
        object_id: [
            u32_at(b, oh::OBJECT_ID),
            u32_at(b, oh::OBJECT_ID + 4),
            u32_at(b, oh::OBJECT_ID + 8),
        ],
        start: u64_at(b, oh::START),
        end: u64_at(b, oh::END),
        correlation_id: opt_u32(rec, oh::CORRELATION_ID),
        overhead_data: opt_u64(rec, oh::OVERHEAD_DATA),
    })
}

#[inline(always)]
fn cuda_event(rec: &[u8]) -> Option<CudaEventRecord> {
    let b = rec.first_chunk::<24>()?;
    Some(CudaEventRecord {
        correlation_id: u32_at(b, ev::CORRELATION_ID),
        context_id: u32_at(b, ev::CONTEXT_ID),
        stream_id: u32_at(b, ev::STREAM_ID),
        event_id: u32_at(b, ev::EVENT_ID),
        device_id: opt_u32(rec, ev::DEVICE_ID),
        device_timestamp: opt_u64(rec, ev::DEVICE_TIMESTAMP),
        cuda_event_sync_id: opt_u64(rec, ev::CUDA_EVENT_SYNC_ID),
        graph_node_id: opt_u64(rec, ev::GRAPH_NODE_ID),
        graph_id: opt_u32(rec, ev::GRAPH_ID),
        source_graph_id: opt_u32(rec, ev::SOURCE_GRAPH_ID),
        source_graph_node_id: opt_u64(rec, ev::SOURCE_GRAPH_NODE_ID),
    })
}

#[inline(always)]
fn sync(rec: &[u8]) -> Option<SyncRecord> {
    let b = rec.first_chunk::<40>()?;
    Some(SyncRecord {
        sync_type: u32_at(b, sy::TYPE),
        start: u64_at(b, sy::START),
        end: u64_at(b, sy::END),
        correlation_id: u32_at(b, sy::CORRELATION_ID),
        context_id: u32_at(b, sy::CONTEXT_ID),
        stream_id: u32_at(b, sy::STREAM_ID),
        cuda_event_id: u32_at(b, sy::CUDA_EVENT_ID),
        cuda_event_sync_id: opt_u64(rec, sy::CUDA_EVENT_SYNC_ID),
        return_value: opt_u32(rec, sy::RETURN_VALUE),
    })
}
