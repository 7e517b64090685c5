//! Runtime and driver API names by CUPTI callback id, with the seed's rules for
//! which calls appear in a trace and which draw a launch-to-GPU flow arrow.

use std::borrow::Cow;

#[allow(clippy::all)]
#[rustfmt::skip]
#[path = "cbid_names.rs"]
mod table;

/// The two CUPTI API domains whose records appear in a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiDomain {
    Runtime,
    Driver,
}

impl ApiDomain {
    fn table(self) -> &'static [(u32, &'static str)] {
        match self {
            Self::Runtime => table::RUNTIME,
            Self::Driver => table::DRIVER,
        }
    }

    /// The call's name (`_vNNNN` suffix stripped), if the table knows the id.
    pub fn known_name(self, cbid: u32) -> Option<&'static str> {
        let table = self.table();
        table
            .binary_search_by_key(&cbid, |&(id, _)| id)
            .ok()
            .map(|i| table[i].1)
    }

    /// The call's name, or `cbid_N` for an id the table does not know.
    pub fn name(self, cbid: i128) -> Cow<'static, str> {
        u32::try_from(cbid)
            .ok()
            .and_then(|id| self.known_name(id))
            .map_or_else(|| Cow::Owned(format!("cbid_{cbid}")), Cow::Borrowed)
    }

    /// Whether the seed keeps a record of this call in the trace.
    pub fn is_registered(self, name: &str) -> bool {
        match self {
            Self::Runtime => !RUNTIME_BLOCKLIST.contains(&name),
            Self::Driver => DRIVER_REGISTERED.contains(&name),
        }
    }

    /// Whether the call starts an `ac2g` flow to the GPU work it caused.
    pub fn requires_flow(self, name: &str) -> bool {
        match self {
            Self::Runtime => {
                RUNTIME_FLOW_NAMES.contains(&name)
                    || name.starts_with("cudaMemcpy")
                    || name.starts_with("cudaMemset")
            }
            Self::Driver => DRIVER_FLOW_NAMES.contains(&name),
        }
    }
}

/// Runtime calls too frequent and too uninteresting to show (the seed's blocklist).
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

/// The only driver calls the seed shows.
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

/// Driver calls the monitor filters out of trace windows (noise the seed drops anyway).
pub const DRIVER_NOISE: &[&str] = &[
    "cuKernelGetAttribute",
    "cuDevicePrimaryCtxGetState",
    "cuCtxGetCurrent",
];

/// Every callback id of `domain` whose name is `name` (several for `_ptsz` variants etc.).
pub fn cbids_named(domain: ApiDomain, name: &str) -> Vec<u32> {
    domain
        .table()
        .iter()
        .filter(|&&(_, n)| n == name)
        .map(|&(id, _)| id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_strip_version_suffix_and_unknown_ids_get_placeholders() {
        assert_eq!(ApiDomain::Runtime.name(211), "cudaLaunchKernel");
        assert_eq!(ApiDomain::Driver.name(307), "cuLaunchKernel");
        assert_eq!(ApiDomain::Runtime.name(999_999), "cbid_999999");
        assert_eq!(ApiDomain::Driver.name(-3), "cbid_-3");
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        for domain in [ApiDomain::Runtime, ApiDomain::Driver] {
            assert!(domain.table().windows(2).all(|w| w[0].0 < w[1].0));
        }
    }

    #[test]
    fn registration_and_flow_rules() {
        assert!(!ApiDomain::Runtime.is_registered("cudaGetDevice"));
        assert!(ApiDomain::Runtime.is_registered("cudaMalloc"));
        assert!(ApiDomain::Runtime.requires_flow("cudaMemcpyAsync"));
        assert!(!ApiDomain::Runtime.requires_flow("cudaMalloc"));
        assert!(ApiDomain::Driver.is_registered("cuMemMap"));
        assert!(!ApiDomain::Driver.is_registered("cuCtxGetCurrent"));
        assert!(ApiDomain::Driver.requires_flow("cuLaunchKernelEx"));
    }
}
