//! CUPTI's callback domains and ids that launch work, and the C layouts of the
//! callback data cupmon reads. Numbers are CUPTI's (`cupti_callbacks.h`,
//! `cupti_driver_cbid.h`, `cupti_runtime_cbid.h`, CUPTI 13.0 numbering, stable
//! since the ids were introduced); the names are checked against cupmon-records'
//! table of CUPTI's ids in the tests below.

use std::ffi::{c_char, c_void};

/// `CUpti_CallbackDomain`.
pub const DOMAIN_DRIVER_API: u32 = 1;
pub const DOMAIN_RUNTIME_API: u32 = 2;
pub const DOMAIN_RESOURCE: u32 = 3;
/// Domains are below this (`CUPTI_CB_DOMAIN_SIZE` of CUPTI 13.0 is 7).
pub const DOMAIN_LIMIT: u32 = 16;

/// `CUpti_ApiCallbackSite`.
pub const SITE_ENTER: u32 = 0;

/// `CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED`: also issued inside a launch made while its
/// stream is being captured into a graph, a launch that runs nothing.
pub const RESOURCE_GRAPHNODE_CREATED: u32 = 13;
/// `CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED`: a node copied into another graph (at
/// instantiation, into the executable graph whose kernels carry the copy's id).
pub const RESOURCE_GRAPHNODE_CLONED: u32 = 14;
/// `CU_GRAPH_NODE_TYPE_MEMCPY` and `..._MEMSET`.
pub const NODE_TYPE_MEMCPY: u32 = 1;
pub const NODE_TYPE_MEMSET: u32 = 2;
/// `CU_GRAPH_NODE_TYPE_KERNEL`.
pub const NODE_TYPE_KERNEL: u32 = 0;
/// `CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED` and `..._GRAPHEXEC_DESTROY_STARTING`.
pub const RESOURCE_GRAPHEXEC_CREATED: u32 = 18;
pub const RESOURCE_GRAPHEXEC_DESTROY_STARTING: u32 = 19;

/// What one call of a launch API puts on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// One kernel.
    Kernel,
    /// A graph: as many kernels as its executable graph has kernel nodes.
    Graph,
}

/// Driver API calls that launch one kernel (the runtime's launches do not go through
/// these: on the H200, a `cudaLaunchKernel` made no `cuLaunchKernel` record).
pub const DRIVER_KERNEL_LAUNCHES: [(u32, &str); 9] = [
    (115, "cuLaunch"),
    (116, "cuLaunchGrid"),
    (117, "cuLaunchGridAsync"),
    (307, "cuLaunchKernel"),
    (442, "cuLaunchKernel_ptsz"),
    (477, "cuLaunchCooperativeKernel"),
    (478, "cuLaunchCooperativeKernel_ptsz"),
    (652, "cuLaunchKernelEx"),
    (653, "cuLaunchKernelEx_ptsz"),
];
pub const DRIVER_GRAPH_LAUNCHES: [(u32, &str); 2] =
    [(514, "cuGraphLaunch"), (515, "cuGraphLaunch_ptsz")];
/// Runtime API calls that launch one kernel.
pub const RUNTIME_KERNEL_LAUNCHES: [(u32, &str); 10] = [
    (13, "cudaLaunch"),
    (211, "cudaLaunchKernel"),
    (213, "cudaLaunch_ptsz"),
    (214, "cudaLaunchKernel_ptsz"),
    (269, "cudaLaunchCooperativeKernel"),
    (270, "cudaLaunchCooperativeKernel_ptsz"),
    (430, "cudaLaunchKernelExC"),
    (431, "cudaLaunchKernelExC_ptsz"),
    (505, "__cudaLaunchKernel"),
    (506, "__cudaLaunchKernel_ptsz"),
];
pub const RUNTIME_GRAPH_LAUNCHES: [(u32, &str); 2] =
    [(311, "cudaGraphLaunch"), (312, "cudaGraphLaunch_ptsz")];

/// Whether `(domain, cbid)` launches work, and what. A `match` the compiler turns
/// into a jump table: this runs in every callback.
#[inline]
pub fn launch_of(domain: u32, cbid: u32) -> Option<Launch> {
    match (domain, cbid) {
        (DOMAIN_DRIVER_API, 115..=117 | 307 | 442 | 477 | 478 | 652 | 653) => Some(Launch::Kernel),
        (DOMAIN_DRIVER_API, 514 | 515) => Some(Launch::Graph),
        (DOMAIN_RUNTIME_API, 13 | 211 | 213 | 214 | 269 | 270 | 430 | 431 | 505 | 506) => {
            Some(Launch::Kernel)
        }
        (DOMAIN_RUNTIME_API, 311 | 312) => Some(Launch::Graph),
        _ => None,
    }
}

/// API call ids below this are looked up in [`copy_calls`].
const COPY_IDS: usize = 1024;

/// The runtime and driver calls that copy or set memory (`cudaMemcpy*`, `cudaMemset*`,
/// `cuMemcpy*`, `cuMemset*`, by CUPTI's names in cupmon-records' table): their stacks
/// are noted like launches' (a copy's record carries its call's correlation id).
fn copy_calls() -> &'static [[u64; COPY_IDS / 64]; 2] {
    static SETS: std::sync::OnceLock<[[u64; COPY_IDS / 64]; 2]> = std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        let mut sets = [[0u64; COPY_IDS / 64]; 2];
        let domains = [
            (cupmon_records::ApiDomain::Driver, ["cuMemcpy", "cuMemset"]),
            (
                cupmon_records::ApiDomain::Runtime,
                ["cudaMemcpy", "cudaMemset"],
            ),
        ];
        for (set, (domain, prefixes)) in sets.iter_mut().zip(domains) {
            for cbid in 0..COPY_IDS as u32 {
                if domain
                    .known_name(cbid)
                    .is_some_and(|n| prefixes.iter().any(|p| n.starts_with(p)))
                {
                    set[cbid as usize / 64] |= 1 << (cbid % 64);
                }
            }
        }
        sets
    })
}

/// Whether `(domain, cbid)` copies or sets memory.
#[inline]
pub fn is_copy(domain: u32, cbid: u32) -> bool {
    let set = match domain {
        DOMAIN_DRIVER_API => 0,
        DOMAIN_RUNTIME_API => 1,
        _ => return false,
    };
    (cbid as usize) < COPY_IDS && copy_calls()[set][cbid as usize / 64] & (1 << (cbid % 64)) != 0
}

/// The copy and memset calls, enabled with the launch callbacks so that their stacks
/// can be noted.
pub fn copy_callbacks() -> impl Iterator<Item = (u32, u32)> {
    [DOMAIN_DRIVER_API, DOMAIN_RUNTIME_API]
        .into_iter()
        .flat_map(|d| (0..COPY_IDS as u32).map(move |c| (d, c)))
        .filter(|&(d, c)| is_copy(d, c))
}

/// Every `(domain, cbid)` cupmon enables to count launches.
pub fn counted_callbacks() -> impl Iterator<Item = (u32, u32)> {
    let driver = DRIVER_KERNEL_LAUNCHES
        .iter()
        .chain(&DRIVER_GRAPH_LAUNCHES)
        .map(|&(id, _)| (DOMAIN_DRIVER_API, id));
    let runtime = RUNTIME_KERNEL_LAUNCHES
        .iter()
        .chain(&RUNTIME_GRAPH_LAUNCHES)
        .map(|&(id, _)| (DOMAIN_RUNTIME_API, id));
    let resource = [
        RESOURCE_GRAPHNODE_CREATED,
        RESOURCE_GRAPHEXEC_CREATED,
        RESOURCE_GRAPHEXEC_DESTROY_STARTING,
    ]
    .into_iter()
    .map(|id| (DOMAIN_RESOURCE, id));
    driver.chain(runtime).chain(resource)
}

/// `CUpti_CallbackData`: what an API callback receives (driver and runtime domains).
#[repr(C)]
#[derive(Debug)]
pub struct CallbackData {
    pub callback_site: u32,
    pub function_name: *const c_char,
    pub function_params: *const c_void,
    pub function_return_value: *mut c_void,
    pub symbol_name: *const c_char,
    pub context: *mut c_void,
    pub context_uid: u32,
    pub correlation_data: *mut u64,
    pub correlation_id: u32,
}

/// `CUpti_ResourceData`: what a resource callback receives.
#[repr(C)]
#[derive(Debug)]
pub struct ResourceData {
    pub context: *mut c_void,
    pub resource_handle: *mut c_void,
    pub resource_descriptor: *mut c_void,
}

/// `CUpti_GraphData`: the resource descriptor of the graph callbacks.
#[repr(C)]
#[derive(Debug)]
pub struct GraphData {
    pub graph: *mut c_void,
    pub original_graph: *mut c_void,
    pub node: *mut c_void,
    pub original_node: *mut c_void,
    pub node_type: u32,
    pub dependency: *mut c_void,
    pub graph_exec: *mut c_void,
}

#[cfg(test)]
mod tests {
    use super::*;
    use cupmon_records::ApiDomain;

    #[test]
    fn the_launch_ids_are_cuptis() {
        let tables: [(ApiDomain, &[(u32, &str)]); 4] = [
            (ApiDomain::Driver, &DRIVER_KERNEL_LAUNCHES),
            (ApiDomain::Driver, &DRIVER_GRAPH_LAUNCHES),
            (ApiDomain::Runtime, &RUNTIME_KERNEL_LAUNCHES),
            (ApiDomain::Runtime, &RUNTIME_GRAPH_LAUNCHES),
        ];
        for (domain, table) in tables {
            for &(id, name) in table {
                assert_eq!(domain.known_name(id), Some(name), "{domain:?} cbid {id}");
            }
        }
    }

    #[test]
    fn launch_of_agrees_with_the_tables() {
        let mut kernels = 0;
        let mut graphs = 0;
        for (domain, cbid) in counted_callbacks() {
            match launch_of(domain, cbid) {
                Some(Launch::Kernel) => kernels += 1,
                Some(Launch::Graph) => graphs += 1,
                None => assert_eq!(domain, DOMAIN_RESOURCE),
            }
        }
        assert_eq!((kernels, graphs), (19, 4));
        for cbid in 0..1000 {
            let listed = |t: &[(u32, &str)]| t.iter().any(|&(id, _)| id == cbid);
            let driver_kernel = listed(&DRIVER_KERNEL_LAUNCHES);
            assert_eq!(
                launch_of(DOMAIN_DRIVER_API, cbid) == Some(Launch::Kernel),
                driver_kernel,
                "driver {cbid}"
            );
            assert_eq!(
                launch_of(DOMAIN_RUNTIME_API, cbid) == Some(Launch::Kernel),
                listed(&RUNTIME_KERNEL_LAUNCHES),
                "runtime {cbid}"
            );
        }
    }

    #[test]
    fn copies_and_memsets_are_told_apart_from_launches() {
        let copies: Vec<(u32, u32)> = copy_callbacks().collect();
        assert!(copies.len() > 20, "{copies:?}");
        for &(d, c) in &copies {
            assert_eq!(launch_of(d, c), None, "{d} {c}");
        }
        // cudaMemcpyAsync is 41 and cudaMemsetAsync 48 in cupti_runtime_cbid.h.
        assert!(is_copy(DOMAIN_RUNTIME_API, 41) && is_copy(DOMAIN_RUNTIME_API, 48));
        assert!(!is_copy(DOMAIN_RUNTIME_API, 211), "cudaLaunchKernel");
        assert!(!is_copy(DOMAIN_RESOURCE, 41));
    }

    #[test]
    fn the_callback_structs_have_cuptis_layout() {
        assert_eq!(std::mem::offset_of!(CallbackData, function_params), 16);
        assert_eq!(
            std::mem::offset_of!(CallbackData, function_return_value),
            24
        );
        assert_eq!(std::mem::offset_of!(CallbackData, correlation_id), 64);
        assert_eq!(std::mem::offset_of!(ResourceData, resource_descriptor), 16);
        assert_eq!(std::mem::offset_of!(GraphData, node_type), 32);
        assert_eq!(std::mem::offset_of!(GraphData, graph_exec), 48);
    }
}
