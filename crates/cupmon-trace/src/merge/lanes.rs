//! Overlap lanes of GPU ops, the one place of the rule (each stream's ops in
//! (start, end, index) order, each on the first lane whose last op has ended:
//! [`place_on_lane`]), used for a window in memory (`complete.rs`: each stream's
//! ops sorted) and here for a window streamed from a dump without holding every op. (The Perfetto writer's own lanes, `cupmon-pftrace`'s `lanes.rs`, are
//! another rule: slices that nest share a lane there.)
//!
//! A stream's ops wait in a heap until the walk's stamp (see
//! [`cupmon_records::JoinWindow`]) is more than the reorder window past their start;
//! by then every op that starts earlier has been read, if its buffer was completed
//! within the window of its start, and the ops leave the heap in the order a full sort
//! gives. An op read after a later-starting op of its stream has left ("late") takes
//! the first free lane when read, and a heap over [`Reorder::max_pending`] lets its
//! earliest op go before its time ("forced"). Lanes then may differ from the full
//! sort's; [`LaneAssigner::late`] and [`LaneAssigner::forced`] say how often.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use cupmon_records::Reorder;
use rustc_hash::FxHashMap;

/// (device, stream, lane) of an overlap track.
pub(crate) type OverlapTrack = (i128, i128, i128);

/// Overlap lane `k` of stream `s` is thread `s + k * LANE_TID`.
const LANE_TID: i128 = 1 << 32;

/// The thread of lane `lane` of the stream whose thread is `stream_tid`.
pub(crate) fn lane_tid(stream_tid: i128, lane: i128) -> i128 {
    stream_tid + lane * LANE_TID
}

/// The thread name of overlap lane `lane` (1..) of stream `stream`.
pub(crate) fn lane_name(stream: i128, lane: i128) -> String {
    if lane == 1 {
        format!("stream {stream} (overlap)")
    } else {
        format!("stream {stream} (overlap {lane})")
    }
}

/// The rule: an op starting at `start` goes on the first lane whose last op has
/// ended (`ends`: each lane's last end), or on a new lane; ops come in (start, end)
/// order.
pub(crate) fn place_on_lane(ends: &mut Vec<i128>, start: i128, end: i128) -> usize {
    let lane = match ends.iter().position(|&e| e <= start) {
        Some(lane) => lane,
        None => {
            ends.push(i128::MIN);
            ends.len() - 1
        }
    };
    ends[lane] = end;
    lane
}

/// (start, end, event index) of an op.
type Op = (i128, i128, usize);

#[derive(Debug, Default)]
struct StreamLanes {
    /// Ops read in order (each after the one before): most of them.
    in_order: VecDeque<Op>,
    /// The others.
    waiting: BinaryHeap<Reverse<Op>>,
    /// The last end on each lane.
    ends: Vec<i128>,
    last_released: Option<Op>,
}

impl StreamLanes {
    fn wait(&mut self, op: Op) {
        if self.in_order.back().is_none_or(|&last| last <= op) {
            self.in_order.push_back(op);
        } else {
            self.waiting.push(Reverse(op));
        }
    }

    fn len(&self) -> usize {
        self.in_order.len() + self.waiting.len()
    }

    /// The first op waiting.
    fn peek(&self) -> Option<Op> {
        match (self.in_order.front(), self.waiting.peek()) {
            (Some(&a), Some(&Reverse(b))) => Some(a.min(b)),
            (a, b) => a.copied().or(b.map(|r| r.0)),
        }
    }

    fn pop(&mut self) -> Option<Op> {
        let first = self.peek()?;
        if self.in_order.front() == Some(&first) {
            self.in_order.pop_front()
        } else {
            self.waiting.pop().map(|r| r.0)
        }
    }

    fn place(&mut self, op: Op) -> i128 {
        place_on_lane(&mut self.ends, op.0, op.1) as i128
    }
}

/// See the module docs.
#[derive(Debug)]
pub(crate) struct LaneAssigner {
    reorder: Reorder,
    streams: BTreeMap<(i128, i128), StreamLanes>,
    /// Event index -> lane of the ops placed and not yet taken.
    placed: FxHashMap<usize, i128>,
    /// Whether to keep each op's lane for [`LaneAssigner::take`] (or only the tracks).
    keep_placed: bool,
    pub late: u64,
    pub forced: u64,
}

impl LaneAssigner {
    pub fn new(reorder: Reorder, keep_placed: bool) -> Self {
        Self {
            reorder,
            streams: BTreeMap::new(),
            placed: FxHashMap::default(),
            keep_placed,
            late: 0,
            forced: 0,
        }
    }

    /// Add GPU event `index` of stream (`device`, `stream`).
    pub fn push(&mut self, device: i128, stream: i128, start: i128, end: i128, index: usize) {
        let op = (start, end.max(start), index);
        let lanes = self.streams.entry((device, stream)).or_default();
        if lanes.last_released.is_some_and(|last| op < last) {
            self.late += 1;
            let lane = lanes.place(op);
            if self.keep_placed {
                self.placed.insert(index, lane);
            }
            return;
        }
        lanes.wait(op);
        if lanes.len() > self.reorder.max_pending.max(1) {
            self.forced += 1;
            if let Some(first) = lanes.pop() {
                lanes.last_released = Some(first);
                let lane = lanes.place(first);
                if self.keep_placed {
                    self.placed.insert(first.2, lane);
                }
            }
        }
    }

    /// Place the ops that start more than the window before `stamp`.
    pub fn release_before(&mut self, stamp: u64) {
        let before = i128::from(stamp) - i128::from(self.reorder.window_ns);
        self.release(|start| start < before);
    }

    /// Place every op still waiting (the walk has ended).
    pub fn release_all(&mut self) {
        self.release(|_| true);
    }

    fn release(&mut self, due: impl Fn(i128) -> bool) {
        let keep_placed = self.keep_placed;
        for lanes in self.streams.values_mut() {
            while let Some(op) = lanes.peek() {
                if !due(op.0) {
                    break;
                }
                lanes.pop();
                lanes.last_released = Some(op);
                let lane = lanes.place(op);
                if keep_placed {
                    self.placed.insert(op.2, lane);
                }
            }
        }
    }

    /// The lane of event `index`, once placed (each is given once).
    pub fn take(&mut self, index: usize) -> Option<i128> {
        self.placed.remove(&index)
    }

    /// Every lane above 0 used so far, by stream: the overlap tracks.
    pub fn tracks(&self) -> Vec<OverlapTrack> {
        let mut tracks = Vec::new();
        for (&(device, stream), lanes) in &self.streams {
            for lane in 1..lanes.ends.len() {
                tracks.push((device, stream, lane as i128));
            }
        }
        tracks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assigner(window_ns: u64, max_pending: usize) -> LaneAssigner {
        LaneAssigner::new(
            Reorder {
                window_ns,
                max_pending,
            },
            true,
        )
    }

    #[test]
    fn ops_out_of_order_within_the_window_get_the_full_sorts_lanes() {
        let mut a = assigner(100, 1000);
        // Read as 2, 0, 1: sorted, 0 [0,50) and 1 [10,20) overlap, 2 [60,70) does not.
        a.push(0, 7, 60, 70, 2);
        a.push(0, 7, 0, 50, 0);
        a.push(0, 7, 10, 20, 1);
        a.release_before(150);
        assert_eq!(a.take(0), Some(0));
        assert_eq!(a.take(1), Some(1));
        assert_eq!(a.take(2), None, "60 is within 100 of 150");
        a.release_all();
        assert_eq!(a.take(2), Some(0));
        assert_eq!(a.take(2), None, "given once");
        assert_eq!(a.tracks(), vec![(0, 7, 1)]);
        assert_eq!((a.late, a.forced), (0, 0));
    }

    #[test]
    fn an_op_later_than_the_window_is_placed_when_read_and_counted() {
        let mut a = assigner(100, 1000);
        a.push(0, 7, 500, 600, 0);
        a.release_before(1000);
        a.push(0, 7, 0, 550, 1);
        assert_eq!(a.late, 1);
        assert_eq!(a.take(1), Some(1));
        let mut b = assigner(100, 2);
        for i in 0..3 {
            b.push(1, 1, i * 10, i * 10 + 5, i as usize);
        }
        assert_eq!(b.forced, 1);
        assert_eq!(b.take(0), Some(0));
    }
}
