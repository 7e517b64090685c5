//! How many kernels each executable graph launches, and whether every node that runs
//! GPU work has a Python stack: both found once, when CUPTI says the graph was
//! instantiated (the resource domain's graph-exec-created callback), from the driver's
//! view of the graph (`cuGraphGetNodes`, `cuGraphNodeGetType`, child graphs
//! recursively), and looked up at every graph launch.

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::sync::{OnceLock, RwLock};

use libloading::Library;
use rustc_hash::FxHashMap;

/// `CUgraphNodeType` values.
const NODE_KERNEL: c_int = 0;
const NODE_MEMCPY: c_int = 1;
const NODE_MEMSET: c_int = 2;
const NODE_GRAPH: c_int = 4;
const NODE_CONDITIONAL: c_int = 13;
/// Child graphs nested deeper than this are not followed (CUDA allows no cycles; this
/// only bounds the recursion).
const MAX_DEPTH: u32 = 64;

type GetNodesFn = unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *mut usize) -> c_int;
type NodeGetTypeFn = unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int;
type ChildGraphFn = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> c_int;

#[derive(Debug, Clone, Copy)]
struct Driver {
    get_nodes: GetNodesFn,
    node_get_type: NodeGetTypeFn,
    child_graph: ChildGraphFn,
}

static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();

/// Why a graph's kernels are not known, or how many it has.
pub(crate) type GraphSize = Result<u64, &'static str>;

/// What a graph launch needs to know of its executable graph.
#[derive(Debug, Clone, Copy)]
struct Exec {
    kernels: GraphSize,
    /// Every kernel, copy and memset node had a Python stack when the graph was
    /// instantiated: each record of a replay carries its node's, and the replay's own
    /// stack would be read for nothing.
    stacked: bool,
}

/// Executable graph (`CUgraphExec` as an address) → what its launches need.
static EXECS: RwLock<Option<FxHashMap<usize, Exec>>> = RwLock::new(None);

/// Loads the driver's graph functions from `libcuda` (the library the driver check
/// loaded). Returns why not, when it cannot.
pub(crate) fn load_driver(libcuda: Option<&Path>) -> Result<(), String> {
    DRIVER
        .get_or_init(|| {
            let name = libcuda.map_or_else(|| "libcuda.so.1".into(), |p| p.as_os_str().to_owned());
            // SAFETY: the driver library, already loaded by the driver check; loading
            // it again takes a reference, and it is never unloaded (leaked below).
            let lib = unsafe { Library::new(&name) }.map_err(|e| e.to_string())?;
            let lib: &'static Library = Box::leak(Box::new(lib));
            // SAFETY: the CUDA driver API's documented signatures for these symbols;
            // the library stays loaded.
            unsafe {
                Ok(Driver {
                    get_nodes: *lib
                        .get::<GetNodesFn>(b"cuGraphGetNodes")
                        .map_err(|e| e.to_string())?,
                    node_get_type: *lib
                        .get::<NodeGetTypeFn>(b"cuGraphNodeGetType")
                        .map_err(|e| e.to_string())?,
                    child_graph: *lib
                        .get::<ChildGraphFn>(b"cuGraphChildGraphNodeGetGraph")
                        .map_err(|e| e.to_string())?,
                })
            }
        })
        .as_ref()
        .map(|_| ())
        .map_err(Clone::clone)
}

/// A graph was instantiated as `exec`: count its kernels now, and see whether its work
/// nodes all have stacks (`has_stack`: a node of `graph`). Called from CUPTI's callback
/// inside `cuGraphInstantiate`, where `graph` is valid.
pub(crate) fn exec_created(
    graph: *mut c_void,
    exec: *mut c_void,
    has_stack: impl Fn(*mut c_void) -> bool,
) {
    if exec.is_null() {
        return;
    }
    let mut stacked = true;
    let kernels = match DRIVER.get() {
        Some(Ok(driver)) if !graph.is_null() => {
            let mut visit = |node| stacked &= has_stack(node);
            count_kernels(driver, graph, 0, &mut visit)
        }
        Some(Ok(_)) => Err("CUPTI gave no graph"),
        _ => Err("the driver's graph functions are not available"),
    };
    // A graph not walked to its end may have work nodes not seen.
    let stacked = stacked && kernels.is_ok();
    EXECS
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(FxHashMap::default)
        .insert(exec as usize, Exec { kernels, stacked });
}

/// `exec` is being destroyed (its address may be reused).
pub(crate) fn exec_destroyed(exec: *mut c_void) {
    if let Some(map) = EXECS.write().unwrap_or_else(|p| p.into_inner()).as_mut() {
        map.remove(&(exec as usize));
    }
}

fn exec_of(exec: *const c_void) -> Option<Exec> {
    let execs = EXECS.read().unwrap_or_else(|p| p.into_inner());
    execs.as_ref()?.get(&(exec as usize)).copied()
}

/// The kernels one launch of `exec` runs; `None` when not known.
#[inline]
pub(crate) fn kernels_of(exec: *const c_void) -> Option<u64> {
    exec_of(exec)?.kernels.ok()
}

/// Whether every record a launch of `exec` makes carries its node's stack (then the
/// launch's own stack is not read: a replay costs no stack walk).
#[inline]
pub(crate) fn replays_carry_stacks(exec: *const c_void) -> bool {
    exec_of(exec).is_some_and(|e| e.stacked)
}

/// Kernel nodes of `graph` and of its child graphs; `work` sees each kernel, copy and
/// memset node.
fn count_kernels(
    driver: &Driver,
    graph: *mut c_void,
    depth: u32,
    work: &mut dyn FnMut(*mut c_void),
) -> GraphSize {
    if depth > MAX_DEPTH {
        return Err("child graphs nested too deep");
    }
    let mut count = 0usize;
    // SAFETY: a valid graph (CUPTI's, or a child graph the driver returned) and a
    // valid out-pointer; a null node array asks for the count only.
    if unsafe { (driver.get_nodes)(graph, std::ptr::null_mut(), &mut count) } != 0 {
        return Err("cuGraphGetNodes failed");
    }
    let mut nodes = vec![std::ptr::null_mut::<c_void>(); count];
    // SAFETY: room for `count` nodes; the driver writes at most that many and sets
    // `count` to what it wrote.
    if unsafe { (driver.get_nodes)(graph, nodes.as_mut_ptr(), &mut count) } != 0 {
        return Err("cuGraphGetNodes failed");
    }
    nodes.truncate(count);
    let mut kernels = 0u64;
    for node in nodes {
        let mut kind: c_int = -1;
        // SAFETY: a node of this graph and a valid out-pointer.
        if unsafe { (driver.node_get_type)(node, &mut kind) } != 0 {
            return Err("cuGraphNodeGetType failed");
        }
        if matches!(kind, NODE_KERNEL | NODE_MEMCPY | NODE_MEMSET) {
            work(node);
        }
        match kind {
            NODE_KERNEL => kernels += 1,
            NODE_GRAPH => {
                let mut child = std::ptr::null_mut();
                // SAFETY: a child-graph node and a valid out-pointer.
                if unsafe { (driver.child_graph)(node, &mut child) } != 0 || child.is_null() {
                    return Err("cuGraphChildGraphNodeGetGraph failed");
                }
                kernels += count_kernels(driver, child, depth + 1, work)?;
            }
            // A conditional body runs a number of times only the GPU knows.
            NODE_CONDITIONAL => return Err("the graph has conditional nodes"),
            _ => {}
        }
    }
    Ok(kernels)
}

/// How many executable graphs are known, and how many of them have no kernel count.
pub(crate) fn known_graphs() -> (u64, u64) {
    let execs = EXECS.read().unwrap_or_else(|p| p.into_inner());
    execs.as_ref().map_or((0, 0), |m| {
        (
            m.len() as u64,
            m.values().filter(|e| e.kernels.is_err()).count() as u64,
        )
    })
}
