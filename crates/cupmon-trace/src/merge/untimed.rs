//! GPU ops without a time. CUPTI writes 0 for a timestamp it does not know (work
//! launched before collection started, records it could not time): drawn at 0 such an
//! op lands at the trace's base time (or at 1970) and stretches the timeline by months,
//! so the complete trace leaves it out and says how many it left out of each kind, in
//! its `cupmon` block (`untimed_gpu_ops`) and on the command's stderr. PyTorch's merge
//! (`--exact`) draws them at 0, as it does. Nothing else about them is shown: no
//! stream or device metadata of their own, no overlap lane, no part of an annotation's
//! span. Their launches have times and stay, each with its `ac2g` start: whether every
//! op of a correlation id is untimed is not known when a streamed trace writes the
//! launch, and a start without a finish is what viewers ignore (PyTorch's merge's
//! synchronisation calls draw such starts too).
//! A memory record without a time still counts for the bytes held after it.
//!
//! An op with a start but no end (`end = 0`: a kernel still running at a forced flush)
//! is kept: it is drawn at its start with duration 0, without a bandwidth.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::window_input::{GpuEvent, GpuKind};
use crate::WindowEvent;

/// How many GPU ops without a start time a trace left out, by the `cat` its events
/// would have had: the ops PyTorch's merge knows, then the other kinds by their
/// window `kind` name (`gpu_memory`, `gpu_memory_pool`, any kind added), in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UntimedGpuOps {
    pub kernel: u64,
    pub memcpy: u64,
    pub memset: u64,
    /// (kind, count) of the kinds PyTorch's merge does not know, sorted by kind.
    others: Vec<(&'static str, u64)>,
}

impl Serialize for UntimedGpuOps {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let counts = self.by_kind();
        let mut map = s.serialize_map(Some(counts.len()))?;
        for (kind, n) in counts {
            map.serialize_entry(kind, &n)?;
        }
        map.end()
    }
}

impl UntimedGpuOps {
    /// All kinds together.
    pub fn total(&self) -> u64 {
        self.by_kind().iter().map(|&(_, n)| n).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The count of `cat` (`kernel`, `gpu_memcpy`, `gpu_memory`, ...).
    pub fn get(&self, cat: &str) -> u64 {
        self.by_kind()
            .into_iter()
            .find(|&(k, _)| k == cat)
            .map_or(0, |(_, n)| n)
    }

    /// `(cat, count)` of the kinds with any, in a fixed order.
    pub fn by_kind(&self) -> Vec<(&'static str, u64)> {
        [
            ("kernel", self.kernel),
            ("gpu_memcpy", self.memcpy),
            ("gpu_memset", self.memset),
        ]
        .into_iter()
        .chain(self.others.iter().copied())
        .filter(|&(_, n)| n > 0)
        .collect()
    }

    /// Count `g` if it has no start time; true when it was counted (to be left out).
    pub(crate) fn take_gpu(&mut self, g: &GpuEvent) -> bool {
        if !is_untimed(g) {
            return false;
        }
        match g.kind {
            GpuKind::Kernel => self.kernel += 1,
            GpuKind::Memcpy => self.memcpy += 1,
            GpuKind::Memset => self.memset += 1,
        }
        true
    }

    /// Count `e` (a kind PyTorch's merge does not know) if it is a GPU record
    /// without a time; true when it was counted.
    pub(crate) fn take_extra(&mut self, e: &WindowEvent) -> bool {
        if !is_untimed_extra(e) {
            return false;
        }
        let kind = e.kind_name();
        match self.others.binary_search_by_key(&kind, |&(k, _)| k) {
            Ok(i) => self.others[i].1 += 1,
            Err(i) => self.others.insert(i, (kind, 1)),
        }
        true
    }
}

/// Whether GPU op `g` has no start time (CUPTI's 0).
pub(crate) fn is_untimed(g: &GpuEvent) -> bool {
    g.start_ns == 0
}

/// Whether `e` (a kind PyTorch's merge does not know) is a GPU record without a
/// time (CUPTI's 0).
pub(crate) fn is_untimed_extra(e: &WindowEvent) -> bool {
    e.device_id().is_some() && e.start_ns() == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_kinds_with_ops_left_out_are_written() {
        let ops = UntimedGpuOps {
            kernel: 42,
            memset: 2,
            ..UntimedGpuOps::default()
        };
        let text = serde_json::to_string(&ops).expect("json");
        assert_eq!(text, r#"{"kernel":42,"gpu_memset":2}"#);
        assert_eq!(ops.total(), 44);
        assert_eq!(ops.by_kind(), vec![("kernel", 42), ("gpu_memset", 2)]);
        assert!(UntimedGpuOps::default().is_empty());
    }

    #[test]
    fn other_kinds_are_counted_by_their_window_kind_in_name_order() {
        let pool = WindowEvent::MemoryPool(cupmon_window::MemoryPoolEvent {
            device_id: 0,
            process_id: 1,
            correlation_id: 0,
            timestamp_ns: 0,
            operation: 1,
            pool_type: 1,
            address: 16,
            size: 0,
            release_threshold: 0,
            utilized_size: 0,
            min_bytes_to_keep: 0,
            is_managed_pool: false,
            name: String::new(),
        });
        let mut timed = pool.clone();
        if let WindowEvent::MemoryPool(p) = &mut timed {
            p.timestamp_ns = 5;
        }
        let mut ops = UntimedGpuOps {
            kernel: 1,
            ..UntimedGpuOps::default()
        };
        assert!(ops.take_extra(&pool));
        assert!(!ops.take_extra(&timed));
        assert!(ops.take_extra(&pool));
        let text = serde_json::to_string(&ops).expect("json");
        assert_eq!(text, r#"{"kernel":1,"gpu_memory_pool":2}"#);
        assert_eq!((ops.get("gpu_memory_pool"), ops.total()), (2, 3));
    }
}
