//! A bounded join on correlation ids for walks that stream a dump.
//!
//! Records that belong together (an API call, its external correlations, the kernels it
//! launched) share a correlation id but lie in different activity buffers, which CUPTI
//! completes in its own order: a kernel's record can come before or after its launch's
//! in a dump. A decode that holds the whole dump can join them with a map over
//! everything; one that streams keeps only the records of the buffers completed within
//! [`Reorder::window_ns`] of each other, looked up by correlation id. Memory then
//! follows the record rate times the window, not the dump's length.
//!
//! Every record of a buffer gets the buffer's *stamp*: the time CUPTI completed the
//! buffer (the chunk header's `unix_completed_ns`; a header without it takes the latest
//! end among the buffer's records), never less than an earlier buffer's stamp. Two
//! records join when their stamps are at most the window apart. A join whose two sides
//! were completed further apart is not made; [`Reorder::max_pending`] caps the entries
//! held, the oldest leaving first (counted in [`JoinWindow::evicted_early`]) when a
//! burst fills it.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

/// How far apart (in buffer completion time) the records a streamed decode joins may
/// lie, and how many it holds at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reorder {
    /// Records of buffers completed at most this far apart join (ns).
    pub window_ns: u64,
    /// The most entries one join holds; past it the oldest leave early.
    pub max_pending: usize,
}

/// CUPTI completes a buffer when it is full or at the flush period (1 s by default);
/// a kernel queued behind others completes later than its launch. A minute covers
/// both with a wide margin.
pub const DEFAULT_REORDER_WINDOW_NS: u64 = 60_000_000_000;
/// About 2 M entries: some tens of MB whatever the rate.
pub const DEFAULT_MAX_PENDING: usize = 1 << 21;

impl Default for Reorder {
    fn default() -> Self {
        Self {
            window_ns: DEFAULT_REORDER_WINDOW_NS,
            max_pending: DEFAULT_MAX_PENDING,
        }
    }
}

/// The entries of one id, oldest first; most ids have one (no allocation then).
#[derive(Debug)]
struct Slot<V> {
    first: (u64, V),
    // Boxed: one pointer in every slot instead of a VecDeque's four words, as most
    // slots never have a second entry (the map stays small in cache).
    #[allow(clippy::box_collection)]
    more: Option<Box<VecDeque<(u64, V)>>>,
}

impl<V> Slot<V> {
    fn iter_newest_first(&self) -> impl Iterator<Item = &(u64, V)> {
        let more = self.more.iter().flat_map(|m| m.iter().rev());
        more.chain(std::iter::once(&self.first))
    }
}

/// Values by correlation id, each stamped; see the module docs.
#[derive(Debug)]
pub struct JoinWindow<V> {
    reorder: Reorder,
    /// Per id, its entries in the order they were added.
    by_id: FxHashMap<u32, Slot<V>>,
    /// (stamp, id) of every entry, oldest first.
    order: VecDeque<(u64, u32)>,
    evicted_early: u64,
}

impl<V> JoinWindow<V> {
    pub fn new(reorder: Reorder) -> Self {
        Self {
            reorder,
            by_id: FxHashMap::default(),
            order: VecDeque::new(),
            evicted_early: 0,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Entries that left before their time because the window was full.
    pub fn evicted_early(&self) -> u64 {
        self.evicted_early
    }

    /// Add `value` for `id`, read in a buffer stamped `stamp` (stamps never go down).
    pub fn insert(&mut self, id: u32, stamp: u64, value: V) {
        if self.order.len() >= self.reorder.max_pending.max(1) {
            self.pop_oldest();
            self.evicted_early += 1;
        }
        match self.by_id.entry(id) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let more = e.get_mut().more.get_or_insert_with(Box::default);
                more.push_back((stamp, value));
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Slot {
                    first: (stamp, value),
                    more: None,
                });
            }
        }
        self.order.push_back((stamp, id));
    }

    /// The latest entry for `id` that `keep` accepts among those stamped within the
    /// window of `stamp` (the latest, as a map filled over the whole dump would keep).
    pub fn find(&self, id: u32, stamp: u64, keep: impl Fn(&V) -> bool) -> Option<&V> {
        self.within(id, stamp).find(|v| keep(v))
    }

    /// Every entry for `id` stamped within the window of `stamp`, the latest first.
    pub fn within(&self, id: u32, stamp: u64) -> impl Iterator<Item = &V> {
        let w = self.reorder.window_ns;
        self.by_id
            .get(&id)
            .into_iter()
            .flat_map(Slot::iter_newest_first)
            .filter(move |(s, _)| s.abs_diff(stamp) <= w)
            .map(|(_, v)| v)
    }

    /// Forget the entries no record stamped `now` or later can join.
    pub fn expire(&mut self, now: u64) {
        let w = self.reorder.window_ns;
        while self
            .order
            .front()
            .is_some_and(|&(s, _)| s.saturating_add(w) < now)
        {
            self.pop_oldest();
        }
    }

    fn pop_oldest(&mut self) {
        let Some((_, id)) = self.order.pop_front() else {
            return;
        };
        // The oldest entry of all is the oldest of its id.
        if let std::collections::hash_map::Entry::Occupied(mut e) = self.by_id.entry(id) {
            match e.get_mut().more.as_mut().and_then(|m| m.pop_front()) {
                Some(next) => e.get_mut().first = next,
                None => {
                    e.remove();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(window_ns: u64, max_pending: usize) -> JoinWindow<u64> {
        JoinWindow::new(Reorder {
            window_ns,
            max_pending,
        })
    }

    #[test]
    fn finds_the_latest_entry_within_the_window() {
        let mut j = window(10, 100);
        j.insert(7, 0, 1);
        j.insert(7, 5, 2);
        j.insert(7, 30, 3);
        assert_eq!(j.find(7, 8, |_| true), Some(&2));
        assert_eq!(j.find(7, 25, |_| true), Some(&3));
        assert_eq!(j.find(7, 12, |_| true), Some(&2), "30 is 18 away");
        assert_eq!(j.find(7, 8, |&v| v == 1), Some(&1));
        assert_eq!(j.find(7, 50, |_| true), None);
        assert_eq!(j.find(8, 0, |_| true), None);
    }

    #[test]
    fn expires_by_stamp_and_caps_the_count() {
        let mut j = window(10, 3);
        for (stamp, id) in [(0, 1), (5, 2), (20, 3)] {
            j.insert(id, stamp, u64::from(id));
        }
        j.expire(14);
        assert_eq!(j.len(), 2, "stamp 0 is more than 10 before 14, 5 is not");
        assert_eq!(j.find(1, 0, |_| true), None);
        j.insert(4, 20, 4);
        j.insert(5, 20, 5);
        assert_eq!(j.len(), 3);
        assert_eq!(j.evicted_early(), 1);
        assert_eq!(j.find(2, 5, |_| true), None, "the oldest left early");
        assert_eq!(j.find(5, 20, |_| true), Some(&5));
    }
}
