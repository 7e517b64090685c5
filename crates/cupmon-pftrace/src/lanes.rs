//! Overlap lanes. Perfetto draws the slices of one track as a stack: a slice
//! that starts inside another must end inside it too. GPU work on one stream
//! (and records with skewed clocks) can overlap without nesting, which
//! Perfetto would mis-pair or hide; such a slice goes on the track's next
//! lane, a child track named "<track> (overlap)", and is never dropped.
//!
//! A lane takes slices in start order only: the writer sorts each track's
//! slices within a window before placing them (see `reorder`), and a slice
//! that arrives after a later-starting one was already placed goes on another
//! lane, because Perfetto orders ties by file position and would pair an
//! earlier slice's end with a later one's begin.

/// The slices of one lane that may still contain later ones.
#[derive(Debug, Default)]
struct Lane {
    /// End times of the open slices, outermost first (non-increasing).
    open_ends: Vec<u64>,
    last_start: Option<u64>,
}

impl Lane {
    /// How many open slices stay open under `[start, end]` if it nests here.
    fn fit(&self, start: u64, end: u64) -> Option<usize> {
        if self.last_start.is_some_and(|last| start < last) {
            return None;
        }
        let mut keep = self.open_ends.len();
        while keep > 0 && self.open_ends[keep - 1] <= start {
            keep -= 1;
        }
        if keep > 0 && self.open_ends[keep - 1] < end {
            return None;
        }
        Some(keep)
    }

    fn push(&mut self, keep: usize, start: u64, end: u64) {
        self.open_ends.truncate(keep);
        self.open_ends.push(end);
        self.last_start = Some(start);
    }
}

/// Where a slice went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placed {
    /// 0 is the track itself; 1.. its overlap lanes.
    pub lane: usize,
    /// No lane could take it and the lane limit was reached: it sits on the
    /// last lane even though it does not nest there.
    pub forced: bool,
}

/// The lanes of one track.
#[derive(Debug)]
pub(crate) struct Lanes {
    lanes: Vec<Lane>,
    max_lanes: usize,
}

impl Lanes {
    pub fn new(max_lanes: usize) -> Self {
        Self {
            lanes: vec![Lane::default()],
            max_lanes: max_lanes.max(1),
        }
    }

    /// The first lane on which `[start, end]` nests, opening one if needed.
    pub fn place(&mut self, start: u64, end: u64) -> Placed {
        for (lane, l) in self.lanes.iter_mut().enumerate() {
            if let Some(keep) = l.fit(start, end) {
                l.push(keep, start, end);
                return Placed {
                    lane,
                    forced: false,
                };
            }
        }
        if self.lanes.len() < self.max_lanes {
            let mut l = Lane::default();
            l.push(0, start, end);
            self.lanes.push(l);
            return Placed {
                lane: self.lanes.len() - 1,
                forced: false,
            };
        }
        let lane = self.lanes.len() - 1;
        let l = &mut self.lanes[lane];
        l.open_ends.clear();
        l.open_ends.push(end);
        l.last_start = Some(l.last_start.map_or(start, |s| s.max(start)));
        Placed { lane, forced: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes_of(slices: &[(u64, u64)]) -> Vec<usize> {
        let mut l = Lanes::new(8);
        slices.iter().map(|&(s, e)| l.place(s, e).lane).collect()
    }

    #[test]
    fn nested_and_sequential_slices_share_the_track() {
        // parent, child, grandchild, sibling, child ending with its parent,
        // adjacent, zero-length at an end.
        let s = [
            (0, 100),
            (10, 50),
            (20, 30),
            (50, 60),
            (70, 100),
            (100, 110),
            (110, 110),
        ];
        assert_eq!(lanes_of(&s), vec![0; s.len()]);
    }

    #[test]
    fn a_non_nested_overlap_goes_to_the_overlap_lane() {
        assert_eq!(lanes_of(&[(0, 10), (5, 15), (15, 20)]), vec![0, 1, 0]);
    }

    #[test]
    fn overlaps_of_overlaps_open_more_lanes() {
        assert_eq!(lanes_of(&[(0, 10), (5, 15), (8, 20)]), vec![0, 1, 2]);
    }

    #[test]
    fn a_slice_earlier_than_the_last_placed_one_moves_to_another_lane() {
        assert_eq!(lanes_of(&[(10, 20), (0, 5)]), vec![0, 1]);
    }

    #[test]
    fn past_the_lane_limit_slices_are_forced_onto_the_last_lane() {
        let mut l = Lanes::new(2);
        assert_eq!(l.place(0, 10).lane, 0);
        assert_eq!(l.place(5, 15).lane, 1);
        let p = l.place(8, 20);
        assert_eq!((p.lane, p.forced), (1, true));
    }
}
