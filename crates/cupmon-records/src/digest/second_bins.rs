//! A timeline in one-second bins aligned to Unix seconds, as a digest stores it: only
//! the seconds from the first to the last with anything in them. It adds exactly into
//! any timeline whose bins are whole seconds from a whole second
//! ([`crate::TimelineBuilder::add_second_bins`]).

use serde::{Deserialize, Serialize};

use crate::Timeline;

pub const NS_PER_S: u64 = 1_000_000_000;

/// See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecondBins {
    /// Unix second of the first bin.
    pub first_s: u64,
    /// Devices, in id order, and each one's busy ns per bin.
    pub devices: Vec<u32>,
    pub busy_ns: Vec<Vec<u64>>,
    /// Kernels started, copy bytes, per bin.
    pub kernels: Vec<u64>,
    pub copy_bytes: Vec<u64>,
}

impl SecondBins {
    /// The bins of `t`, a timeline of one-second bins from a whole second.
    pub fn from_timeline(t: &Timeline) -> Self {
        debug_assert!(t.bin_ns == NS_PER_S && t.from_ns.is_multiple_of(NS_PER_S));
        let used = |i: &usize| {
            let b = &t.bins[*i];
            b.kernels > 0 || b.copy_bytes > 0 || b.busy_ns.iter().any(|&x| x > 0)
        };
        let Some(first) = (0..t.bins.len()).find(used) else {
            return Self::default();
        };
        let last = (0..t.bins.len()).rev().find(used).unwrap_or(first);
        let bins = &t.bins[first..=last];
        Self {
            first_s: t.from_ns / NS_PER_S + first as u64,
            devices: t.devices.clone(),
            busy_ns: (0..t.devices.len())
                .map(|d| bins.iter().map(|b| b.busy_ns[d]).collect())
                .collect(),
            kernels: bins.iter().map(|b| b.kernels).collect(),
            copy_bytes: bins.iter().map(|b| b.copy_bytes).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.kernels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }
}
