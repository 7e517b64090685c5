//! Kernels of the autograd engine's backward threads, attributed to the forward op that
//! made them, by torch's sequence numbers.
//!
//! The engine runs backward ops on threads without Python frames, so their launches
//! have no stack of their own. Under `torch.autograd.profiler.emit_nvtx()` every op's
//! NVTX range names its autograd sequence number (`"aten::addmm, seq = 41, op_id = 7"`),
//! and each backward op's range the number of the forward op that made it
//! (`"AddmmBackward0, seq = 41, op_id = 90"`). cupmon-inject's NVTX side reads the
//! number and calls [`range_opened`]:
//!
//! - on a thread with Python frames (a forward op): the thread's stack is noted under
//!   the number, in a ring indexed by its low bits (one atomic word a slot; bounded:
//!   [`SEQ_SLOTS`]);
//! - on a thread without (a backward op): the stack noted under the number, made a
//!   "backward of" stack (`cupmon_pystack::backward_of`), becomes the thread's stack
//!   for its launches until the range closes ([`range_closed`]). Only the outermost
//!   such range of a thread counts: ops that a backward op calls carry the engine
//!   thread's own sequence numbers (with `create_graph`), not the forward's.
//! - after the range closes, the thread's launches outside any backward op keep that
//!   op's stack until the next backward op's range opens: the engine sums the
//!   gradients the op made into its consumer's input (`InputBuffer::add`, inside
//!   `evaluate_function` but outside the op's range) and then runs the `AccumulateGrad`
//!   of the parameters it made gradients for (its ready queue takes `AccumulateGrad`
//!   first: its sequence number is the largest); neither range carries a number (grad
//!   mode is off in the backward). On the H200 a fifth of the backward kernel time,
//!   5 kernels a step, had no line before this
//!   (`bench/results/2026-12-03-h200-session-nvtx-stacks-straggler`); that they are
//!   these is read from torch's engine, and tests/gpu/stacks_check.py lists the kernels
//!   still without one. A backward op whose forward is not known ends it (its own
//!   launches, and those after it, have no stack).
//!
//! Nothing here runs unless a range carries a sequence number; a launch from a Python
//! thread never looks here, one from a thread without Python frames reads one
//! thread-local word.

use std::alloc::{alloc_zeroed, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use cupmon_pystack::NO_PYTHON_FRAMES;

/// Sequence numbers whose forward stack is kept: 1 M (8 MiB of address space, touched
/// only as numbers are noted), far more than the ops between a forward op and its
/// backward in one step (pipeline schedules included). A backward op whose forward's
/// slot was taken by a later number since is counted as `overwritten`.
pub const SEQ_SLOTS: usize = 1 << 20;
const SEQ_MASK: u64 = (SEQ_SLOTS - 1) as u64;

static SEQ_RING: OnceLock<&'static [AtomicU64]> = OnceLock::new();

thread_local! {
    /// The "backward of" stack of the backward op running on this thread (0: none).
    static BACKWARD: Cell<u32> = const { Cell::new(0) };
    /// The "backward of" stack of the last backward op this thread ran (0: none, or
    /// its forward was not known): its launches outside any backward op carry it.
    static LAST: Cell<u32> = const { Cell::new(0) };
}

/// How the backward ops of the session fared.
#[derive(Debug, Default)]
struct Counts {
    /// Backward op ranges given their forward op's stack.
    attributed: AtomicU64,
    /// Ranges with a number on threads without Python frames, outside a backward op
    /// already claimed, whose number no forward op on a Python thread noted (its
    /// forward ran before the session or on a thread without Python frames; or an op
    /// inside such a backward op, with the engine thread's own number).
    unseen: AtomicU64,
    /// Backward op ranges whose forward's note was overwritten (more than
    /// [`SEQ_SLOTS`] numbers in between).
    overwritten: AtomicU64,
}

static COUNTS: Counts = Counts {
    attributed: AtomicU64::new(0),
    unseen: AtomicU64::new(0),
    overwritten: AtomicU64::new(0),
};

/// What [`range_opened`] did, for [`range_closed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeqRange {
    /// Nothing (stacks off, inside a backward op already, no match).
    #[default]
    Ignored,
    /// A forward op's stack noted.
    Forward,
    /// This thread's launches carry the forward op's stack, marked backward.
    Backward,
}

fn seq_ring() -> &'static [AtomicU64] {
    SEQ_RING.get_or_init(|| {
        let layout = Layout::array::<AtomicU64>(SEQ_SLOTS).expect("sequence ring layout");
        // SAFETY: a non-zero-sized layout; zeroed memory is a valid `AtomicU64` (0: an
        // empty slot); leaked on purpose (NVTX calls may come at exit).
        unsafe {
            let p = alloc_zeroed(layout).cast::<AtomicU64>();
            assert!(!p.is_null(), "cannot allocate the sequence-number ring");
            std::slice::from_raw_parts(p, SEQ_SLOTS)
        }
    })
}

/// A slot's word: the number's low 32 bits, then the stack (never 0).
fn word(seq: u64, stack: u32) -> u64 {
    (seq << 32) | u64::from(stack)
}

enum Noted {
    Stack(u32),
    Unseen,
    Overwritten,
}

fn noted(seq: u64) -> Noted {
    let Some(ring) = SEQ_RING.get() else {
        return Noted::Unseen;
    };
    let w = ring[(seq & SEQ_MASK) as usize].load(Ordering::Relaxed);
    let (slot_seq, stack) = ((w >> 32) as u32, w as u32);
    if w == 0 {
        Noted::Unseen
    } else if slot_seq == seq as u32 {
        Noted::Stack(stack)
    } else if (slot_seq.wrapping_sub(seq as u32) as i32) > 0 {
        Noted::Overwritten
    } else {
        Noted::Unseen
    }
}

/// A range carrying autograd sequence number `seq` opened on this thread. Cold: kept
/// out of the NVTX push path of ranges without a number.
#[cold]
#[inline(never)]
pub fn range_opened(seq: u64) -> SeqRange {
    if !super::stacks::python_stacks_noted() || BACKWARD.try_with(Cell::get).unwrap_or(1) != 0 {
        return SeqRange::Ignored;
    }
    let Some(stack) = cupmon_pystack::this_thread_stack() else {
        return SeqRange::Ignored;
    };
    if stack != NO_PYTHON_FRAMES {
        seq_ring()[(seq & SEQ_MASK) as usize].store(word(seq, stack), Ordering::Relaxed);
        return SeqRange::Forward;
    }
    // Until this op is known to be attributed, what follows it has no stack.
    let _ = LAST.try_with(|l| l.set(0));
    let forward = match noted(seq) {
        Noted::Stack(forward) => forward,
        Noted::Unseen => {
            COUNTS.unseen.fetch_add(1, Ordering::Relaxed);
            return SeqRange::Ignored;
        }
        Noted::Overwritten => {
            COUNTS.overwritten.fetch_add(1, Ordering::Relaxed);
            return SeqRange::Ignored;
        }
    };
    let Some(backward) = cupmon_pystack::backward_of(forward) else {
        return SeqRange::Ignored;
    };
    if BACKWARD.try_with(|b| b.set(backward)).is_err() {
        return SeqRange::Ignored;
    }
    let _ = LAST.try_with(|l| l.set(backward));
    COUNTS.attributed.fetch_add(1, Ordering::Relaxed);
    SeqRange::Backward
}

/// The range [`range_opened`] answered `how` for closed.
#[cold]
#[inline(never)]
pub fn range_closed(how: SeqRange) {
    if how == SeqRange::Backward {
        let _ = BACKWARD.try_with(|b| b.set(0));
    }
}

/// The stack of a launch from this thread, which has no Python frames: the backward op's
/// ("backward of" its forward's stack) while one runs, else the last one's (see the
/// module's comment), else `NO_PYTHON_FRAMES`.
#[inline]
pub(crate) fn thread_without_python() -> u32 {
    // Thread-local reads only: this is on the launch path of the engine's threads.
    match BACKWARD.try_with(Cell::get) {
        Ok(NO_PYTHON_FRAMES) => LAST.try_with(Cell::get).unwrap_or(NO_PYTHON_FRAMES),
        Ok(stack) => stack,
        Err(_) => NO_PYTHON_FRAMES,
    }
}

/// What the backward ops of the process came to so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BackwardCounts {
    /// Backward op ranges given their forward op's stack.
    pub attributed: u64,
    /// Ranges whose number no forward op noted.
    pub forward_not_seen: u64,
    /// Ranges whose forward's note was overwritten.
    pub forward_overwritten: u64,
}

/// Backward op ranges so far.
pub fn backward_counts() -> BackwardCounts {
    BackwardCounts {
        attributed: COUNTS.attributed.load(Ordering::Relaxed),
        forward_not_seen: COUNTS.unseen.load(Ordering::Relaxed),
        forward_overwritten: COUNTS.overwritten.load(Ordering::Relaxed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_taken_by_a_later_number_is_overwritten_not_another_stack() {
        let ring = seq_ring();
        let seq = 12_345u64;
        ring[(seq & SEQ_MASK) as usize].store(word(seq, 7), Ordering::Relaxed);
        assert!(matches!(noted(seq), Noted::Stack(7)));
        let later = seq + SEQ_SLOTS as u64;
        ring[(later & SEQ_MASK) as usize].store(word(later, 9), Ordering::Relaxed);
        assert!(matches!(noted(seq), Noted::Overwritten));
        assert!(matches!(noted(later), Noted::Stack(9)));
        assert!(matches!(noted(later + SEQ_SLOTS as u64), Noted::Unseen));
        assert!(matches!(noted(seq + 1), Noted::Unseen), "never noted");
    }
}
