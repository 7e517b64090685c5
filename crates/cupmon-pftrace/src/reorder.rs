//! The reorder window of one track. Records reach cupmon in completion
//! order (a driver call's record before the runtime call around it), but
//! lanes need slices in start order: each track holds its last `window`
//! slices, already encoded, and releases the earliest-starting one when a
//! new one arrives. Memory is bounded by the window, not by the trace.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An encoded slice waiting for its lane.
#[derive(Debug)]
pub(crate) struct Pending {
    pub start: u64,
    pub end: u64,
    /// Arrival number: equal slices leave in arrival order.
    pub seq: u64,
    /// The BEGIN event's `TrackEvent` body, without its `track_uuid`.
    pub body: Vec<u8>,
}

impl Pending {
    /// Release order: earlier start first; on a tie the longer slice (the
    /// parent) first; then arrival.
    fn key(&self) -> (u64, std::cmp::Reverse<u64>, u64) {
        (self.start, std::cmp::Reverse(self.end), self.seq)
    }
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    // Reversed: BinaryHeap pops its maximum, the window releases its minimum.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

#[derive(Debug, Default)]
pub(crate) struct Reorder {
    heap: BinaryHeap<Pending>,
}

impl Reorder {
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn push(&mut self, p: Pending) {
        self.heap.push(p);
    }

    /// The earliest pending slice.
    pub fn pop(&mut self) -> Option<Pending> {
        self.heap.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(start: u64, end: u64, seq: u64) -> Pending {
        Pending {
            start,
            end,
            seq,
            body: Vec::new(),
        }
    }

    #[test]
    fn releases_by_start_then_parent_first_then_arrival() {
        let mut r = Reorder::default();
        for x in [p(5, 6, 0), p(0, 5, 1), p(0, 10, 2), p(5, 6, 3)] {
            r.push(x);
        }
        let order: Vec<_> = std::iter::from_fn(|| r.pop())
            .map(|x| (x.start, x.end, x.seq))
            .collect();
        assert_eq!(order, vec![(0, 10, 2), (0, 5, 1), (5, 6, 0), (5, 6, 3)]);
    }
}
