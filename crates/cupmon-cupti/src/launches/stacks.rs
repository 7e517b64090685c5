//! The Python stack of each launch, noted at the launch callback under its correlation
//! id (which the kernel's activity record carries) for the monitor's worker to join when
//! the record arrives.
//!
//! The notes live in a ring indexed by the correlation id's low bits, each slot one
//! atomic word holding the id and the stack: the launch path stores one word (no lock,
//! no allocation), and a note overwritten before the worker read it (more than
//! [`SLOTS`] API calls between a launch and the delivery of its record) is seen as
//! lost by its id, never taken for another launch's.

use std::alloc::{alloc_zeroed, Layout};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::cupti::Cupti;
use crate::raw::GetGraphNodeIdFn;

/// Slots of the ring: 4 M (32 MiB of address space, touched as correlation ids advance).
pub const SLOTS: usize = 1 << 22;
const MASK: u32 = (SLOTS - 1) as u32;

/// Whether launches note their stacks, and whether each note is timed: one load on the
/// launch path says both.
static ON: AtomicU8 = AtomicU8::new(OFF);
const OFF: u8 = 0;
const NOTING: u8 = 1;
/// Noting, each stack read timed (`CUPMON_PYTHON_STACK_TIMING`, `stack_timing.rs`).
const NOTING_TIMED: u8 = 2;
static RING: OnceLock<&'static [AtomicU64]> = OnceLock::new();

fn ring() -> &'static [AtomicU64] {
    RING.get_or_init(|| {
        let layout = Layout::array::<AtomicU64>(SLOTS).expect("ring layout");
        // SAFETY: a non-zero-sized layout; zeroed memory is a valid `AtomicU64` (0); the
        // ring lives for the process (leaked on purpose: callbacks may read it at exit).
        unsafe {
            let p = alloc_zeroed(layout).cast::<AtomicU64>();
            assert!(!p.is_null(), "cannot allocate the launch-stack ring");
            std::slice::from_raw_parts(p, SLOTS)
        }
    })
}

/// Graph nodes' stacks: taken when a node is created (during stream capture, inside
/// the launch call that made it; or by `cudaGraphAdd*Node`), copied to the node's
/// clones (the executable graph's nodes), keyed by CUPTI's node id, which each
/// replayed kernel's, copy's and memset's record carries. A replay costs nothing: when
/// all of a graph's work nodes have stacks, its launches read none
/// (`graphs::replays_carry_stacks`).
#[derive(Debug, Default)]
struct NodeStacks {
    by_node: HashMap<u64, u32>,
    /// Pairs new since the worker last took them.
    new: Vec<(u64, u32)>,
}

static NODES: Mutex<Option<NodeStacks>> = Mutex::new(None);
static NODE_ID: OnceLock<Option<GetGraphNodeIdFn>> = OnceLock::new();

fn node_id(node: *mut c_void) -> Option<u64> {
    let get = (*NODE_ID.get()?)?;
    let mut id = 0u64;
    // SAFETY: CUPTI's function with its documented signature, a node handle CUPTI
    // passed to the resource callback running now, and a valid out-pointer.
    (unsafe { get(node, &mut id) } == 0 && id != 0).then_some(id)
}

fn with_nodes<T>(f: impl FnOnce(&mut NodeStacks) -> T) -> T {
    let mut guard = NODES.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(NodeStacks::default))
}

/// A graph node was created on this thread: its stack is this thread's now.
pub(crate) fn node_created(node: *mut c_void) {
    if ON.load(Ordering::Relaxed) == OFF || node.is_null() {
        return;
    }
    let (Some(id), Some(stack)) = (node_id(node), this_thread_stack()) else {
        return;
    };
    with_nodes(|n| {
        n.by_node.insert(id, stack);
        n.new.push((id, stack));
    });
}

/// A node was cloned (into an executable graph): the clone has the original's stack.
pub(crate) fn node_cloned(original: *mut c_void, node: *mut c_void) {
    if ON.load(Ordering::Relaxed) == OFF || node.is_null() || original.is_null() {
        return;
    }
    let (Some(from), Some(to)) = (node_id(original), node_id(node)) else {
        return;
    };
    with_nodes(|n| {
        if let Some(&stack) = n.by_node.get(&from) {
            n.by_node.insert(to, stack);
            n.new.push((to, stack));
        }
    });
}

/// Whether graph node `node` has a stack (one of a graph being instantiated: see
/// `graphs::exec_created`).
pub(crate) fn node_has_stack(node: *mut c_void) -> bool {
    node_id(node).is_some_and(|id| with_nodes(|n| n.by_node.contains_key(&id)))
}

/// Graph nodes given a stack since the last call: `(node id, stack)`.
pub fn take_new_node_stacks() -> Vec<(u64, u32)> {
    with_nodes(|n| std::mem::take(&mut n.new))
}

/// Every graph node's stack so far (a new dump of the same process starts with them).
pub fn all_node_stacks() -> Vec<(u64, u32)> {
    with_nodes(|n| n.by_node.iter().map(|(&k, &v)| (k, v)).collect())
}

/// Starts noting stacks, each kept to its innermost `max_frames` frames, each read timed
/// when `timed`; `Err` says why they cannot be (no readable Python here).
pub fn start_python_stacks(
    cupti: &Cupti,
    max_frames: usize,
    timed: bool,
) -> Result<String, String> {
    let python = cupmon_pystack::status()?;
    cupmon_pystack::set_max_frames(max_frames);
    if timed {
        super::stack_timing::calibrate();
    }
    NODE_ID.get_or_init(|| cupti.raw().get_graph_node_id);
    ring();
    ON.store(if timed { NOTING_TIMED } else { NOTING }, Ordering::Release);
    super::subscriber::resync();
    Ok(python)
}

pub fn stop_python_stacks() {
    ON.store(OFF, Ordering::Release);
    super::subscriber::resync();
}

/// Whether the launch callbacks note each launch's Python stack now (between
/// [`start_python_stacks`] and [`stop_python_stacks`]; the copy callbacks are then
/// wanted too).
pub fn python_stacks_noted() -> bool {
    ON.load(Ordering::Acquire) != OFF
}

/// The calling thread's stack; on a thread without Python frames, the stack of the
/// backward op running there, if torch's sequence numbers named its forward op
/// (`autograd.rs`: one thread-local read, only on such threads).
#[inline]
fn this_thread_stack() -> Option<u32> {
    match cupmon_pystack::this_thread_stack()? {
        cupmon_pystack::NO_PYTHON_FRAMES => Some(super::autograd::thread_without_python()),
        stack => Some(stack),
    }
}

/// At the entry of the outermost launch call of a thread.
#[inline]
pub(crate) fn note_launch(correlation_id: u32) {
    let on = ON.load(Ordering::Relaxed);
    if on == OFF {
        return;
    }
    let timed = (on == NOTING_TIMED).then(std::time::Instant::now);
    let stack = this_thread_stack();
    if let Some(t0) = timed {
        super::stack_timing::add(t0);
    }
    let Some(stack) = stack else {
        return;
    };
    let Some(ring) = RING.get() else { return };
    let word = (u64::from(correlation_id) << 32) | (u64::from(stack) + 1);
    ring[(correlation_id & MASK) as usize].store(word, Ordering::Relaxed);
}

/// The stack noted for the launch of `correlation_id` (`cupmon_pystack::NO_PYTHON_FRAMES`
/// for a thread without Python frames); `None` when none was, or it was overwritten.
pub fn launch_stack(correlation_id: u32) -> Option<u32> {
    let word = RING.get()?[(correlation_id & MASK) as usize].load(Ordering::Relaxed);
    if word == 0 || (word >> 32) as u32 != correlation_id {
        return None;
    }
    Some((word as u32).wrapping_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overwritten_note_is_lost_not_taken_for_another() {
        ring();
        let slot = |c: u32| &ring()[(c & MASK) as usize];
        slot(5).store((5u64 << 32) | 8, Ordering::Relaxed);
        assert_eq!(launch_stack(5), Some(7));
        let later = 5 + SLOTS as u32;
        slot(later).store((u64::from(later) << 32) | 1, Ordering::Relaxed);
        assert_eq!(launch_stack(5), None, "overwritten by a later launch");
        assert_eq!(
            launch_stack(later),
            Some(0),
            "a thread without Python frames"
        );
        assert_eq!(launch_stack(6), None, "never noted");
    }
}
