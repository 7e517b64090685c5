//! CUDA graphs as far as cupmon looks at them: graphs of kernel, empty, child-graph
//! and conditional nodes, the driver functions that list them (`cuGraphGetNodes`,
//! `cuGraphNodeGetType`, `cuGraphChildGraphNodeGetGraph`: the fake doubles as the
//! driver), and executable graphs whose instantiation and destruction issue CUPTI's
//! resource callbacks.

#![allow(non_snake_case)]

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use crate::cupti_types::{
    GraphData, ResourceData, DOMAIN_RESOURCE, RESOURCE_GRAPHEXEC_CREATED,
    RESOURCE_GRAPHEXEC_DESTROY_STARTING, RESOURCE_GRAPHNODE_CLONED, RESOURCE_GRAPHNODE_CREATED,
};
use crate::state::lock;
use crate::subscriber;

/// `CUgraphNodeType` values.
const NODE_KERNEL: c_int = 0;
const NODE_GRAPH: c_int = 4;
const NODE_EMPTY: c_int = 5;
const NODE_CONDITIONAL: c_int = 13;
/// `CUDA_ERROR_INVALID_VALUE`.
const INVALID_VALUE: c_int = 1;

const GRAPH_BASE: usize = 0x6700_0000;
const GRAPH_STRIDE: usize = 0x1_0000;
const EXEC_BASE: usize = 0x6900_0000;
const EXEC_STRIDE: usize = 0x10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Kernel,
    Empty,
    Child(usize),
    Conditional,
}

#[derive(Debug, Default)]
struct Graphs {
    graphs: Vec<Vec<Node>>,
    /// Executable graphs: the kernels one launch runs (`None`: destroyed).
    execs: Vec<Option<u32>>,
    /// The node ids of each executable graph's kernels (empty: not from a capture).
    exec_nodes: Vec<Vec<u64>>,
    /// Handles of kernel nodes captured and not instantiated yet.
    captured: Vec<usize>,
    /// Graphs made by capture, by graph id, and their nodes: the captured nodes
    /// themselves, as the driver lists a captured graph's.
    captured_graphs: Vec<(usize, Vec<usize>)>,
    /// Node handles made so far (captured nodes and their clones).
    nodes_made: usize,
}

static GRAPHS: Mutex<Graphs> = Mutex::new(Graphs {
    graphs: Vec::new(),
    execs: Vec::new(),
    exec_nodes: Vec::new(),
    captured: Vec::new(),
    captured_graphs: Vec::new(),
    nodes_made: 0,
});

/// Captured and cloned nodes' handles: apart from the graphs' own (`node_handle`), and
/// their own graph-node ids (`cuptiGetGraphNodeId`).
const LOOSE_NODE_BASE: usize = 0x6b00_0000;

fn new_loose_node(g: &mut Graphs) -> usize {
    g.nodes_made += 1;
    LOOSE_NODE_BASE + g.nodes_made * 8
}

/// `cuptiGetGraphNodeId`: a node's id is its handle.
///
/// # Safety
/// `id` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuptiGetGraphNodeId(node: *mut c_void, id: *mut u64) -> u32 {
    if node.is_null() || id.is_null() {
        return crate::cupti_types::Status::ERROR_INVALID_PARAMETER.0;
    }
    // SAFETY: checked non-null; valid for a write by the caller's contract.
    unsafe { id.write(node as u64) };
    0
}

/// The node ids of `exec`'s kernels, in launch order (empty when not from a capture).
pub(crate) fn node_ids_of(exec: u64) -> Vec<u64> {
    let Some(at) = usize::try_from(exec)
        .ok()
        .and_then(|e| e.checked_sub(EXEC_BASE))
    else {
        return Vec::new();
    };
    lock(&GRAPHS)
        .exec_nodes
        .get(at / EXEC_STRIDE)
        .cloned()
        .unwrap_or_default()
}

/// Instantiates the nodes captured since the last call: a cloned-node callback per node,
/// then the graph-exec-created callback.
pub(crate) fn instantiate_captured() -> u64 {
    let (graph, exec, clones) = {
        let mut g = lock(&GRAPHS);
        let captured = std::mem::take(&mut g.captured);
        let clones: Vec<(usize, usize)> = captured
            .iter()
            .map(|&original| (original, new_loose_node(&mut g)))
            .collect();
        g.graphs.push(vec![Node::Kernel; captured.len()]);
        let id = g.graphs.len() - 1;
        g.captured_graphs.push((id, captured.clone()));
        let graph = graph_handle(id);
        g.execs.push(Some(captured.len() as u32));
        let at = g.execs.len() - 1;
        g.exec_nodes.resize(at, Vec::new());
        g.exec_nodes
            .push(clones.iter().map(|&(_, clone)| clone as u64).collect());
        (graph, EXEC_BASE + at * EXEC_STRIDE, clones)
    };
    for (original, clone) in clones {
        node_callback(RESOURCE_GRAPHNODE_CLONED, graph, clone, original);
    }
    resource_callback(RESOURCE_GRAPHEXEC_CREATED, graph, exec);
    exec as u64
}

fn node_callback(cbid: u32, graph: usize, node: usize, original: usize) {
    let mut graph_data = GraphData {
        graph: graph as *mut c_void,
        original_graph: std::ptr::null_mut(),
        node: node as *mut c_void,
        original_node: original as *mut c_void,
        node_type: NODE_KERNEL as u32,
        dependency: std::ptr::null_mut(),
        graph_exec: std::ptr::null_mut(),
    };
    let data = ResourceData {
        context: std::ptr::null_mut(),
        resource_handle: std::ptr::null_mut(),
        resource_descriptor: (&mut graph_data as *mut GraphData).cast(),
    };
    subscriber::issue(DOMAIN_RESOURCE, cbid, (&data as *const ResourceData).cast());
}

fn graph_handle(id: usize) -> usize {
    GRAPH_BASE + id * GRAPH_STRIDE
}

fn node_handle(graph: usize, index: usize) -> usize {
    graph_handle(graph) + index + 1
}

/// (graph, node index) of a node handle.
fn node_of(g: &Graphs, handle: usize) -> Option<Node> {
    let offset = handle.checked_sub(GRAPH_BASE)?;
    let (graph, index) = (
        offset / GRAPH_STRIDE,
        (offset % GRAPH_STRIDE).checked_sub(1)?,
    );
    g.graphs.get(graph)?.get(index).copied()
}

/// The captured node a handle names: all are kernels.
fn is_loose_node(g: &Graphs, handle: usize) -> bool {
    handle
        .checked_sub(LOOSE_NODE_BASE)
        .is_some_and(|o| o > 0 && o % 8 == 0 && o / 8 <= g.nodes_made)
}

fn graph_of(g: &Graphs, handle: usize) -> Option<&Vec<Node>> {
    let offset = handle.checked_sub(GRAPH_BASE)?;
    if offset % GRAPH_STRIDE != 0 {
        return None;
    }
    g.graphs.get(offset / GRAPH_STRIDE)
}

/// A graph of `kernels` kernel nodes and an empty node, with a child graph of
/// `child_kernels` kernel nodes when non-zero and a conditional node when
/// `conditional` (its body runs one kernel per launch); instantiated, with the
/// graph-exec-created callback. Returns the executable graph.
pub(crate) fn instantiate(kernels: u32, child_kernels: u32, conditional: bool) -> u64 {
    let (graph, exec) = {
        let mut g = lock(&GRAPHS);
        let mut nodes = vec![Node::Kernel; kernels as usize];
        nodes.push(Node::Empty);
        if child_kernels > 0 {
            g.graphs.push(vec![Node::Kernel; child_kernels as usize]);
            nodes.push(Node::Child(g.graphs.len() - 1));
        }
        if conditional {
            nodes.push(Node::Conditional);
        }
        g.graphs.push(nodes);
        let graph = graph_handle(g.graphs.len() - 1);
        g.execs
            .push(Some(kernels + child_kernels + u32::from(conditional)));
        (graph, EXEC_BASE + (g.execs.len() - 1) * EXEC_STRIDE)
    };
    resource_callback(RESOURCE_GRAPHEXEC_CREATED, graph, exec);
    exec as u64
}

/// The kernels one launch of `exec` runs; `None` for an unknown or destroyed one.
pub(crate) fn kernels_of(exec: u64) -> Option<u32> {
    let at = usize::try_from(exec).ok()?.checked_sub(EXEC_BASE)?;
    if at % EXEC_STRIDE != 0 {
        return None;
    }
    *lock(&GRAPHS).execs.get(at / EXEC_STRIDE)?
}

/// Destroys `exec`, with the graph-exec-destroy callback first; false if unknown.
pub(crate) fn destroy(exec: u64) -> bool {
    if kernels_of(exec).is_none() {
        return false;
    }
    resource_callback(RESOURCE_GRAPHEXEC_DESTROY_STARTING, 0, exec as usize);
    let at = (exec as usize - EXEC_BASE) / EXEC_STRIDE;
    lock(&GRAPHS).execs[at] = None;
    true
}

/// The graph-node-created callback of a kernel node added by stream capture.
pub(crate) fn kernel_node_captured() {
    let node = {
        let mut g = lock(&GRAPHS);
        let node = new_loose_node(&mut g);
        g.captured.push(node);
        node
    };
    node_callback(RESOURCE_GRAPHNODE_CREATED, graph_handle(0), node, 0);
}

fn resource_callback(cbid: u32, graph: usize, exec: usize) {
    let mut graph_data = GraphData {
        graph: graph as *mut c_void,
        original_graph: std::ptr::null_mut(),
        node: std::ptr::null_mut(),
        original_node: std::ptr::null_mut(),
        node_type: 0,
        dependency: std::ptr::null_mut(),
        graph_exec: exec as *mut c_void,
    };
    let data = ResourceData {
        context: std::ptr::null_mut(),
        resource_handle: std::ptr::null_mut(),
        resource_descriptor: (&mut graph_data as *mut GraphData).cast(),
    };
    subscriber::issue(DOMAIN_RESOURCE, cbid, (&data as *const ResourceData).cast());
}

/// `cuGraphGetNodes`.
///
/// # Safety
/// `num_nodes` must be valid for reads and writes; `nodes`, when not null, for
/// writes of `*num_nodes` handles.
#[no_mangle]
pub unsafe extern "C" fn cuGraphGetNodes(
    graph: *mut c_void,
    nodes: *mut *mut c_void,
    num_nodes: *mut usize,
) -> c_int {
    if num_nodes.is_null() {
        return INVALID_VALUE;
    }
    let g = lock(&GRAPHS);
    let Some(list) = graph_of(&g, graph as usize) else {
        return INVALID_VALUE;
    };
    let id = (graph as usize - GRAPH_BASE) / GRAPH_STRIDE;
    let captured = g.captured_graphs.iter().find(|(g, _)| *g == id);
    if nodes.is_null() {
        // SAFETY: valid for writes by the caller's contract.
        unsafe { num_nodes.write(list.len()) };
        return 0;
    }
    // SAFETY: valid for reads by the caller's contract.
    let room = unsafe { num_nodes.read() };
    for i in 0..room {
        let node = if let Some((_, handles)) = captured.filter(|_| i < list.len()) {
            handles[i] as *mut c_void
        } else if i < list.len() {
            node_handle(id, i) as *mut c_void
        } else {
            std::ptr::null_mut()
        };
        // SAFETY: `nodes` holds `room` handles by the caller's contract.
        unsafe { nodes.add(i).write(node) };
    }
    // SAFETY: as above.
    unsafe { num_nodes.write(room.min(list.len())) };
    0
}

/// `cuGraphNodeGetType`.
///
/// # Safety
/// `kind` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuGraphNodeGetType(node: *mut c_void, kind: *mut c_int) -> c_int {
    if kind.is_null() {
        return INVALID_VALUE;
    }
    let g = lock(&GRAPHS);
    let node = if is_loose_node(&g, node as usize) {
        Node::Kernel
    } else {
        let Some(node) = node_of(&g, node as usize) else {
            return INVALID_VALUE;
        };
        node
    };
    let value = match node {
        Node::Kernel => NODE_KERNEL,
        Node::Empty => NODE_EMPTY,
        Node::Child(_) => NODE_GRAPH,
        Node::Conditional => NODE_CONDITIONAL,
    };
    // SAFETY: checked non-null; valid for a write by the caller's contract.
    unsafe { kind.write(value) };
    0
}

/// `cuGraphChildGraphNodeGetGraph`.
///
/// # Safety
/// `graph` must be null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuGraphChildGraphNodeGetGraph(
    node: *mut c_void,
    graph: *mut *mut c_void,
) -> c_int {
    if graph.is_null() {
        return INVALID_VALUE;
    }
    let Some(Node::Child(child)) = node_of(&lock(&GRAPHS), node as usize) else {
        return INVALID_VALUE;
    };
    // SAFETY: checked non-null; valid for a write by the caller's contract.
    unsafe { graph.write(graph_handle(child) as *mut c_void) };
    0
}
