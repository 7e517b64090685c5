//! KERNEL and CONCURRENT_KERNEL: `CUpti_ActivityKernel9` (12.x) .. `Kernel13` (13.4+).

use super::ActivityRecord;
use crate::ActivityKind;

activity_record! {
    /// A kernel execution.
    KernelRecord = "kernel", kinds [CONCURRENT_KERNEL, KERNEL],
    structs [
        18 => "CUpti_ActivityKernel9" / 208,
        130_000 => "CUpti_ActivityKernel10" / 216,
        130_100 => "CUpti_ActivityKernel11" / 224,
        130_300 => "CUpti_ActivityKernel12" / 232,
        130_400 => "CUpti_ActivityKernel13" / 248,
    ],
    timestamps [start, end, completed, queued, submitted],
    fields {
        kind: ActivityKind = "kind" @ 0,
        /// `cacheConfig.both`: requested (low 4 bits) and executed (high 4 bits).
        cache_config: u8 = "cacheConfig" @ 4,
        shared_memory_config: u8 = "sharedMemoryConfig" @ 5,
        registers_per_thread: u16 = "registersPerThread" @ 6,
        partitioned_global_cache_requested: u32 = "partitionedGlobalCacheRequested" @ 8,
        partitioned_global_cache_executed: u32 = "partitionedGlobalCacheExecuted" @ 12,
        start: u64 = "start" @ 16,
        /// 0 for a kernel still running at a forced flush.
        end: u64 = "end" @ 24,
        completed: u64 = "completed" @ 32,
        device_id: u32 = "deviceId" @ 40,
        context_id: u32 = "contextId" @ 44,
        stream_id: u32 = "streamId" @ 48,
        grid_x: i32 = "gridX" @ 52,
        grid_y: i32 = "gridY" @ 56,
        grid_z: i32 = "gridZ" @ 60,
        block_x: i32 = "blockX" @ 64,
        block_y: i32 = "blockY" @ 68,
        block_z: i32 = "blockZ" @ 72,
        static_shared_memory: i32 = "staticSharedMemory" @ 76,
        dynamic_shared_memory: i32 = "dynamicSharedMemory" @ 80,
        local_memory_per_thread: u32 = "localMemoryPerThread" @ 84,
        local_memory_total: u32 = "localMemoryTotal" @ 88,
        correlation_id: u32 = "correlationId" @ 92,
        grid_id: i64 = "gridId" @ 96,
        /// CUPTI's `const char *name`: valid only in the recording process; resolve it
        /// with the dump's `kernel_names.tsv`.
        name_ptr: u64 = "name" @ 104,
        queued: u64 = "queued" @ 120,
        submitted: u64 = "submitted" @ 128,
        launch_type: u8 = "launchType" @ 136,
        is_shared_memory_carveout_requested: u8 = "isSharedMemoryCarveoutRequested" @ 137,
        shared_memory_carveout_requested: u8 = "sharedMemoryCarveoutRequested" @ 138,
        shared_memory_executed: u32 = "sharedMemoryExecuted" @ 140,
        graph_node_id: u64 = "graphNodeId" @ 144,
        shmem_limit_config: u32 = "shmemLimitConfig" @ 152,
        graph_id: u32 = "graphId" @ 156,
        channel_id: u32 = "channelID" @ 168,
        channel_type: u32 = "channelType" @ 172,
        cluster_x: u32 = "clusterX" @ 176,
        cluster_y: u32 = "clusterY" @ 180,
        cluster_z: u32 = "clusterZ" @ 184,
        cluster_scheduling_policy: u32 = "clusterSchedulingPolicy" @ 188,
        local_memory_total_v2: u64 = "localMemoryTotal_v2" @ 192,
        max_potential_cluster_size: u32 = "maxPotentialClusterSize" @ 200,
        max_active_clusters: u32 = "maxActiveClusters" @ 204,
        /// 13.0+.
        is_device_launched: u8 = "isDeviceLaunched" @ 208,
        /// 13.1+.
        priority: i32 = "priority" @ 216,
        /// 13.3+.
        execution_model: u32 = "executionModel" @ 224,
        /// 13.4+.
        source_graph_id: u32 = "sourceGraphId" @ 232,
        /// 13.4+.
        source_graph_node_id: u64 = "sourceGraphNodeId" @ 240,
    }
}

impl KernelRecord {
    /// CONCURRENT_KERNEL rather than the serialised KERNEL.
    pub fn is_concurrent(&self) -> bool {
        self.kind == ActivityKind::CONCURRENT_KERNEL
    }

    pub fn grid(&self) -> [i32; 3] {
        [self.grid_x, self.grid_y, self.grid_z]
    }

    pub fn block(&self) -> [i32; 3] {
        [self.block_x, self.block_y, self.block_z]
    }

    pub fn cluster(&self) -> [u32; 3] {
        [self.cluster_x, self.cluster_y, self.cluster_z]
    }
}

impl ActivityRecord for KernelRecord {
    fn span(&self) -> Option<(u64, u64)> {
        Some((self.start, self.end))
    }
    fn correlation_id(&self) -> u32 {
        self.correlation_id
    }
}
