//! Byte offsets of every field cupmon reads, per activity struct family, as measured
//! with gcc on CUPTI's headers by `tools/cupti-tables/gen_layouts.py` (numbers in
//! `tools/cupti-tables/cupti_layouts.json`). An offset never changes between CUPTI
//! versions (12.0 to 13.5): structs only grow at their end, so one offset list per
//! family serves every version, and a field exists in a version's struct when it ends
//! within that struct's size (one exception: `isDeviceLaunched` of memcpy/memset took
//! over padding in 13.0, see `LayoutTable::memop_device_launched`).

/// One C field of a CUPTI activity struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The field's name in CUPTI's header.
    pub c_name: &'static str,
    pub offset: usize,
    pub size: usize,
}

macro_rules! fields {
    ($(#[$doc:meta])* $module:ident { $($konst:ident = $c:literal @ $off:literal : $size:literal,)* }) => {
        $(#[$doc])*
        pub mod $module {
            use super::Field;
            $(
                #[doc = concat!("`", $c, "`: offset ", $off, ", ", $size, " bytes.")]
                pub const $konst: usize = $off;
            )*
            /// Every field cupmon reads, in declaration order.
            pub static FIELDS: &[Field] = &[$(Field { c_name: $c, offset: $off, size: $size },)*];
        }
    };
}

fields! {
    /// `CUpti_ActivityKernel9` (12.x) .. `CUpti_ActivityKernel13` (13.4+).
    kernel {
        KIND = "kind" @ 0: 4,
        CACHE_CONFIG = "cacheConfig" @ 4: 1,
        SHARED_MEMORY_CONFIG = "sharedMemoryConfig" @ 5: 1,
        REGISTERS_PER_THREAD = "registersPerThread" @ 6: 2,
        PARTITIONED_GLOBAL_CACHE_REQUESTED = "partitionedGlobalCacheRequested" @ 8: 4,
        PARTITIONED_GLOBAL_CACHE_EXECUTED = "partitionedGlobalCacheExecuted" @ 12: 4,
        START = "start" @ 16: 8,
        END = "end" @ 24: 8,
        COMPLETED = "completed" @ 32: 8,
        DEVICE_ID = "deviceId" @ 40: 4,
        CONTEXT_ID = "contextId" @ 44: 4,
        STREAM_ID = "streamId" @ 48: 4,
        GRID_X = "gridX" @ 52: 4,
        GRID_Y = "gridY" @ 56: 4,
        GRID_Z = "gridZ" @ 60: 4,
        BLOCK_X = "blockX" @ 64: 4,
        BLOCK_Y = "blockY" @ 68: 4,
        BLOCK_Z = "blockZ" @ 72: 4,
        STATIC_SHARED_MEMORY = "staticSharedMemory" @ 76: 4,
        DYNAMIC_SHARED_MEMORY = "dynamicSharedMemory" @ 80: 4,
        LOCAL_MEMORY_PER_THREAD = "localMemoryPerThread" @ 84: 4,
        LOCAL_MEMORY_TOTAL = "localMemoryTotal" @ 88: 4,
        CORRELATION_ID = "correlationId" @ 92: 4,
        GRID_ID = "gridId" @ 96: 8,
        NAME = "name" @ 104: 8,
        QUEUED = "queued" @ 120: 8,
        SUBMITTED = "submitted" @ 128: 8,
        LAUNCH_TYPE = "launchType" @ 136: 1,
        IS_SHARED_MEMORY_CARVEOUT_REQUESTED = "isSharedMemoryCarveoutRequested" @ 137: 1,
        SHARED_MEMORY_CARVEOUT_REQUESTED = "sharedMemoryCarveoutRequested" @ 138: 1,
        SHARED_MEMORY_EXECUTED = "sharedMemoryExecuted" @ 140: 4,
        GRAPH_NODE_ID = "graphNodeId" @ 144: 8,
        SHMEM_LIMIT_CONFIG = "shmemLimitConfig" @ 152: 4,
        GRAPH_ID = "graphId" @ 156: 4,
        CHANNEL_ID = "channelID" @ 168: 4,
        CHANNEL_TYPE = "channelType" @ 172: 4,
        CLUSTER_X = "clusterX" @ 176: 4,
        CLUSTER_Y = "clusterY" @ 180: 4,
        CLUSTER_Z = "clusterZ" @ 184: 4,
        CLUSTER_SCHEDULING_POLICY = "clusterSchedulingPolicy" @ 188: 4,
        LOCAL_MEMORY_TOTAL_V2 = "localMemoryTotal_v2" @ 192: 8,
        MAX_POTENTIAL_CLUSTER_SIZE = "maxPotentialClusterSize" @ 200: 4,
        MAX_ACTIVE_CLUSTERS = "maxActiveClusters" @ 204: 4,
        IS_DEVICE_LAUNCHED = "isDeviceLaunched" @ 208: 1,
        PRIORITY = "priority" @ 216: 4,
        EXECUTION_MODEL = "executionModel" @ 224: 4,
        SOURCE_GRAPH_ID = "sourceGraphId" @ 232: 4,
        SOURCE_GRAPH_NODE_ID = "sourceGraphNodeId" @ 240: 8,
    }
}

fields! {
    /// `CUpti_ActivityMemcpy5` (12.0) .. `CUpti_ActivityMemcpy7` (13.4+).
    memcpy {
        KIND = "kind" @ 0: 4,
        COPY_KIND = "copyKind" @ 4: 1,
        SRC_KIND = "srcKind" @ 5: 1,
        DST_KIND = "dstKind" @ 6: 1,
        FLAGS = "flags" @ 7: 1,
        BYTES = "bytes" @ 8: 8,
        START = "start" @ 16: 8,
        END = "end" @ 24: 8,
        DEVICE_ID = "deviceId" @ 32: 4,
        CONTEXT_ID = "contextId" @ 36: 4,
        STREAM_ID = "streamId" @ 40: 4,
        CORRELATION_ID = "correlationId" @ 44: 4,
        RUNTIME_CORRELATION_ID = "runtimeCorrelationId" @ 48: 4,
        GRAPH_NODE_ID = "graphNodeId" @ 64: 8,
        GRAPH_ID = "graphId" @ 72: 4,
        CHANNEL_ID = "channelID" @ 76: 4,
        CHANNEL_TYPE = "channelType" @ 80: 4,
        IS_DEVICE_LAUNCHED = "isDeviceLaunched" @ 84: 1,
        COPY_COUNT = "copyCount" @ 88: 8,
        SOURCE_GRAPH_ID = "sourceGraphId" @ 96: 4,
        SOURCE_GRAPH_NODE_ID = "sourceGraphNodeId" @ 104: 8,
    }
}

fields! {
    /// `CUpti_ActivityMemset4` (12.0) .. `CUpti_ActivityMemset5` (13.4+).
    memset {
        KIND = "kind" @ 0: 4,
        VALUE = "value" @ 4: 4,
        BYTES = "bytes" @ 8: 8,
        START = "start" @ 16: 8,
        END = "end" @ 24: 8,
        DEVICE_ID = "deviceId" @ 32: 4,
        CONTEXT_ID = "contextId" @ 36: 4,
        STREAM_ID = "streamId" @ 40: 4,
        CORRELATION_ID = "correlationId" @ 44: 4,
        FLAGS = "flags" @ 48: 2,
        MEMORY_KIND = "memoryKind" @ 50: 2,
        GRAPH_NODE_ID = "graphNodeId" @ 64: 8,
        GRAPH_ID = "graphId" @ 72: 4,
        CHANNEL_ID = "channelID" @ 76: 4,
        CHANNEL_TYPE = "channelType" @ 80: 4,
        IS_DEVICE_LAUNCHED = "isDeviceLaunched" @ 84: 1,
        SOURCE_GRAPH_ID = "sourceGraphId" @ 88: 4,
        SOURCE_GRAPH_NODE_ID = "sourceGraphNodeId" @ 96: 8,
    }
}

fields! {
    /// `CUpti_ActivityAPI` (runtime and driver records; unchanged 12.0 .. 13.5).
    api {
        KIND = "kind" @ 0: 4,
        CBID = "cbid" @ 4: 4,
        START = "start" @ 8: 8,
        END = "end" @ 16: 8,
        PROCESS_ID = "processId" @ 24: 4,
        THREAD_ID = "threadId" @ 28: 4,
        CORRELATION_ID = "correlationId" @ 32: 4,
        RETURN_VALUE = "returnValue" @ 36: 4,
    }
}

fields! {
    /// `CUpti_ActivityExternalCorrelation` (unchanged 12.0 .. 13.5).
    external_correlation {
        KIND = "kind" @ 0: 4,
        EXTERNAL_KIND = "externalKind" @ 4: 4,
        EXTERNAL_ID = "externalId" @ 8: 8,
        CORRELATION_ID = "correlationId" @ 16: 4,
    }
}

fields! {
    /// `CUpti_ActivityOverhead` (12.0) .. `CUpti_ActivityOverhead3` (12.4+). `objectId`
    /// is a union: `pt` (process id, thread id) or `dcs` (device, context, stream id).
    overhead {
        KIND = "kind" @ 0: 4,
        OVERHEAD_KIND = "overheadKind" @ 4: 4,
        OBJECT_KIND = "objectKind" @ 8: 4,
        OBJECT_ID = "objectId" @ 12: 12,
        START = "start" @ 24: 8,
        END = "end" @ 32: 8,
        CORRELATION_ID = "correlationId" @ 40: 4,
        OVERHEAD_DATA = "overheadData" @ 48: 8,
    }
}

fields! {
    /// `CUpti_ActivityCudaEvent` (12.0) .. `CUpti_ActivityCudaEvent3` (13.5).
    cuda_event {
        KIND = "kind" @ 0: 4,
        CORRELATION_ID = "correlationId" @ 4: 4,
        CONTEXT_ID = "contextId" @ 8: 4,
        STREAM_ID = "streamId" @ 12: 4,
        EVENT_ID = "eventId" @ 16: 4,
        DEVICE_ID = "deviceId" @ 24: 4,
        DEVICE_TIMESTAMP = "deviceTimestamp" @ 40: 8,
        CUDA_EVENT_SYNC_ID = "cudaEventSyncId" @ 48: 8,
        GRAPH_NODE_ID = "graphNodeId" @ 56: 8,
        GRAPH_ID = "graphId" @ 64: 4,
        SOURCE_GRAPH_ID = "sourceGraphId" @ 68: 4,
        SOURCE_GRAPH_NODE_ID = "sourceGraphNodeId" @ 72: 8,
    }
}

fields! {
    /// `CUpti_ActivitySynchronization` (12.0) .. `CUpti_ActivitySynchronization2` (12.8+).
    synchronization {
        KIND = "kind" @ 0: 4,
        TYPE = "type" @ 4: 4,
        START = "start" @ 8: 8,
        END = "end" @ 16: 8,
        CORRELATION_ID = "correlationId" @ 24: 4,
        CONTEXT_ID = "contextId" @ 28: 4,
        STREAM_ID = "streamId" @ 32: 4,
        CUDA_EVENT_ID = "cudaEventId" @ 36: 4,
        CUDA_EVENT_SYNC_ID = "cudaEventSyncId" @ 40: 8,
        RETURN_VALUE = "returnValue" @ 48: 4,
    }
}
