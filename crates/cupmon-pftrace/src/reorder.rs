//! The reorder window of one track. Records reach cupmon in completion
//! order (a driver call's record before the runtime call around it), but
//! lanes need slices in start order: each track holds its last `window`
//! slices, already encoded, and releases the earliest-starting one when a
//! new one arrives. Memory is bounded by the window, not by the trace.

use std::collections::VecDeque;

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

/// Pending slices sorted by release order. Most arrive in order and are
/// appended; the few that arrive early are inserted (a binary heap cost a
/// fifth of the writer's time on in-order traces).
#[derive(Debug, Default)]
pub(crate) struct Reorder {
    sorted: VecDeque<Pending>,
}

impl Reorder {
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn push(&mut self, p: Pending) {
        let key = p.key();
        if self.sorted.back().is_none_or(|last| last.key() <= key) {
            self.sorted.push_back(p);
        } else {
            let at = self.sorted.partition_point(|q| q.key() <= key);
            self.sorted.insert(at, p);
        }
    }

    /// The innermost pending slice that encloses `ts` (starts at or before
    /// it, ends at or after it): the latest-starting such slice, the
    /// shorter of two that start together.
    pub fn enclosing_mut(&mut self, ts: u64) -> Option<&mut Pending> {
        self.sorted
            .iter_mut()
            .rev()
            .find(|p| p.start <= ts && ts <= p.end)
    }

    /// Whether a pending slice encloses `ts` and lies inside a slice from
    /// `start` (at most `ts`) to `end` that arrives after it: it starts
    /// later, or with it and ends sooner. Only slices starting from `start`
    /// on are looked at, so slices that arrive in order cost one step.
    pub fn inner_enclosing(&self, ts: u64, start: u64, end: u64) -> bool {
        self.sorted
            .iter()
            .rev()
            .skip_while(|p| p.start > ts)
            .take_while(|p| p.start >= start)
            .any(|p| p.end >= ts && (p.start > start || p.end < end))
    }

    /// The earliest pending slice.
    pub fn pop(&mut self) -> Option<Pending> {
        self.sorted.pop_front()
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

    #[test]
    fn the_enclosing_slice_is_the_innermost_one() {
        let mut r = Reorder::default();
        for x in [p(0, 100, 0), p(10, 50, 1), p(10, 20, 2), p(60, 70, 3)] {
            r.push(x);
        }
        let seq = |r: &mut Reorder, ts| r.enclosing_mut(ts).map(|p| p.seq);
        assert_eq!(seq(&mut r, 10), Some(2));
        assert_eq!(seq(&mut r, 30), Some(1));
        assert_eq!(seq(&mut r, 55), Some(0));
        assert_eq!(seq(&mut r, 101), None);
    }

    #[test]
    fn a_pending_slice_inside_a_later_one_is_found() {
        let mut r = Reorder::default();
        for x in [p(0, 100, 0), p(10, 20, 1), p(30, 30, 2)] {
            r.push(x);
        }
        // (10, 20) is inside (10, 50) and (5, 60); not inside (10, 20) itself.
        assert!(r.inner_enclosing(15, 10, 50));
        assert!(r.inner_enclosing(15, 5, 60));
        assert!(!r.inner_enclosing(15, 10, 20));
        // (0, 100) encloses 15 but is not inside (10, 50).
        assert!(!r.inner_enclosing(25, 10, 50));
        assert!(r.inner_enclosing(30, 25, 40));
        assert!(!r.inner_enclosing(31, 25, 40));
    }
}
