//! Per-stream busy time: the union of each (device, stream)'s kernel intervals, the
//! same rule as a device's busy time in `cupmon stats`' collectives section (kernels
//! with both timestamps), so a stream's share of its device is comparable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{IntervalUnion, KernelRecord};

/// Stretches each stream's union holds before settling the oldest (16 bytes each):
/// kept small, as a process may have many streams.
const UNION_LIMIT: usize = 1 << 14;

/// One stream's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamBusy {
    pub device: u32,
    pub stream: u32,
    pub kernels: u64,
    pub busy_ns: u64,
    /// Possible over-count of `busy_ns` (kernels far out of time order).
    pub over_ns: u64,
}

/// Accumulates kernels per stream.
#[derive(Debug, Default)]
pub struct StreamBusyBuilder {
    streams: BTreeMap<(u32, u32), (u64, IntervalUnion)>,
}

impl StreamBusyBuilder {
    pub fn add(&mut self, k: &KernelRecord) {
        if k.start == 0 || k.end < k.start {
            return;
        }
        let (n, union) = self
            .streams
            .entry((k.device_id, k.stream_id))
            .or_insert_with(|| (0, IntervalUnion::with_limit(UNION_LIMIT)));
        *n += 1;
        union.add(k.start, k.end);
    }

    /// By device, then stream.
    pub fn finish(self) -> Vec<StreamBusy> {
        self.streams
            .into_iter()
            .map(|((device, stream), (kernels, mut union))| {
                let (busy_ns, over_ns) = union.total();
                StreamBusy {
                    device,
                    stream,
                    kernels,
                    busy_ns,
                    over_ns,
                }
            })
            .collect()
    }
}

/// Add `other`'s streams into `into` (both by device, then stream): the busy times of
/// two parts of a dump add up (see `digest`'s module docs for where they may overlap).
pub fn merge_streams(into: &mut Vec<StreamBusy>, other: &[StreamBusy]) {
    for o in other {
        match into.binary_search_by_key(&(o.device, o.stream), |s| (s.device, s.stream)) {
            Ok(i) => {
                let s = &mut into[i];
                s.kernels += o.kernels;
                s.busy_ns += o.busy_ns;
                s.over_ns += o.over_ns;
            }
            Err(i) => into.insert(i, o.clone()),
        }
    }
}
