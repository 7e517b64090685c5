//! CUPTI's callback ids (`CUpti_CallbackId`, CUPTI 13.0 numbering) of the API
//! calls the controls make, as their API records carry them. The fake's tests
//! check them against the names in cupmon-records' generated table.

/// `cudaMalloc`.
pub const RUNTIME_MALLOC: u32 = 20;
/// `cudaFree`.
pub const RUNTIME_FREE: u32 = 22;
/// `cudaMemcpyAsync`.
pub const RUNTIME_MEMCPY_ASYNC: u32 = 41;
/// `cudaMemsetAsync`.
pub const RUNTIME_MEMSET_ASYNC: u32 = 51;
/// `cudaLaunchKernel`.
pub const RUNTIME_LAUNCH_KERNEL: u32 = 211;
/// `cudaMallocAsync`.
pub const RUNTIME_MALLOC_ASYNC: u32 = 373;
/// `cudaFreeAsync`.
pub const RUNTIME_FREE_ASYNC: u32 = 375;
/// `cudaMemPoolTrimTo`.
pub const RUNTIME_MEM_POOL_TRIM_TO: u32 = 377;
/// `cudaMemPoolCreate`.
pub const RUNTIME_MEM_POOL_CREATE: u32 = 383;
/// `cudaMemPoolDestroy`.
pub const RUNTIME_MEM_POOL_DESTROY: u32 = 384;
/// `cudaGraphLaunch`.
pub const RUNTIME_GRAPH_LAUNCH: u32 = 311;
/// `cuLaunchKernel` (driver API).
pub const DRIVER_LAUNCH_KERNEL: u32 = 307;
/// `cudaStreamSynchronize`.
pub const RUNTIME_STREAM_SYNCHRONIZE: u32 = 131;
