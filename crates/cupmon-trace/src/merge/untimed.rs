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

use serde::Serialize;

use super::window_input::{GpuEvent, GpuKind};
use crate::WindowEvent;

/// How many GPU ops without a start time a trace left out, by the `cat` its events
/// would have had.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct UntimedGpuOps {
    #[serde(skip_serializing_if = "is_zero")]
    pub kernel: u64,
    #[serde(rename = "gpu_memcpy", skip_serializing_if = "is_zero")]
    pub memcpy: u64,
    #[serde(rename = "gpu_memset", skip_serializing_if = "is_zero")]
    pub memset: u64,
    /// Driver allocations and frees (MEMORY2).
    #[serde(rename = "gpu_memory", skip_serializing_if = "is_zero")]
    pub memory: u64,
    #[serde(rename = "gpu_memory_pool", skip_serializing_if = "is_zero")]
    pub memory_pool: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl UntimedGpuOps {
    /// All kinds together.
    pub fn total(&self) -> u64 {
        self.kernel + self.memcpy + self.memset + self.memory + self.memory_pool
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// `(cat, count)` of the kinds with any, in a fixed order.
    pub fn by_kind(&self) -> Vec<(&'static str, u64)> {
        [
            ("kernel", self.kernel),
            ("gpu_memcpy", self.memcpy),
            ("gpu_memset", self.memset),
            ("gpu_memory", self.memory),
            ("gpu_memory_pool", self.memory_pool),
        ]
        .into_iter()
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
        match e {
            WindowEvent::Memory(_) => self.memory += 1,
            WindowEvent::MemoryPool(_) => self.memory_pool += 1,
            _ => {}
        }
        true
    }
}

/// Whether GPU op `g` has no start time (CUPTI's 0).
pub(crate) fn is_untimed(g: &GpuEvent) -> bool {
    g.start_ns == 0
}

/// Whether `e` is a memory or memory-pool record without a time (CUPTI's 0).
pub(crate) fn is_untimed_extra(e: &WindowEvent) -> bool {
    matches!(e, WindowEvent::Memory(_) | WindowEvent::MemoryPool(_)) && e.start_ns() == 0
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
}
