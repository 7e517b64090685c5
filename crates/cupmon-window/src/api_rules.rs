//! PyTorch's rules (`merge_trace_window_into_chrome_trace`) for which runtime and
//! driver calls appear in a trace and which draw a launch-to-GPU flow arrow.

use cupmon_records::ApiDomain;

/// Runtime calls too frequent and too uninteresting to show (PyTorch's blocklist).
pub const RUNTIME_BLOCKLIST: &[&str] = &[
    "cudaGetDevice",
    "cudaSetDevice",
    "cudaGetLastError",
    "cudaEventCreate",
    "cudaEventCreateWithFlags",
    "cudaEventDestroy",
];

const RUNTIME_FLOW_NAMES: &[&str] = &[
    "cudaLaunchKernel",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice",
    "cudaLaunchKernelExC",
    "cudaGraphLaunch",
    "cudaStreamSynchronize",
    "cudaDeviceSynchronize",
    "cudaStreamWaitEvent",
];

/// The only driver calls PyTorch's merge shows.
const DRIVER_REGISTERED: &[&str] = &[
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuMemCreate",
    "cuMemMap",
    "cuMemUnmap",
    "cuMemRelease",
    "cuMemExportToShareableHandle",
    "cuMemImportFromShareableHandle",
];

const DRIVER_FLOW_NAMES: &[&str] = &["cuLaunchKernel", "cuLaunchKernelEx"];

/// Driver calls the monitor filters out of trace windows (noise the merge drops anyway).
pub const DRIVER_NOISE: &[&str] = &[
    "cuKernelGetAttribute",
    "cuDevicePrimaryCtxGetState",
    "cuCtxGetCurrent",
];

/// Whether PyTorch's merge keeps a record of this call in the trace.
pub fn is_registered(domain: ApiDomain, name: &str) -> bool {
    match domain {
        ApiDomain::Runtime => !RUNTIME_BLOCKLIST.contains(&name),
        ApiDomain::Driver => DRIVER_REGISTERED.contains(&name),
    }
}

/// Whether the call starts an `ac2g` flow to the GPU work it caused.
pub fn requires_flow(domain: ApiDomain, name: &str) -> bool {
    match domain {
        ApiDomain::Runtime => {
            RUNTIME_FLOW_NAMES.contains(&name)
                || name.starts_with("cudaMemcpy")
                || name.starts_with("cudaMemset")
        }
        ApiDomain::Driver => DRIVER_FLOW_NAMES.contains(&name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_and_flow_rules() {
        assert!(!is_registered(ApiDomain::Runtime, "cudaGetDevice"));
        assert!(is_registered(ApiDomain::Runtime, "cudaMalloc"));
        assert!(requires_flow(ApiDomain::Runtime, "cudaMemcpyAsync"));
        assert!(!requires_flow(ApiDomain::Runtime, "cudaMalloc"));
        assert!(is_registered(ApiDomain::Driver, "cuMemMap"));
        assert!(!is_registered(ApiDomain::Driver, "cuCtxGetCurrent"));
        assert!(requires_flow(ApiDomain::Driver, "cuLaunchKernelEx"));
    }
}
