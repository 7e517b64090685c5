//! GPU time by user annotation (cupmon's `annotate`, NVTX ranges): each kernel, copy
//! and memset counts under the CUSTOM1 annotation its launch ran in, the innermost one
//! (CUPTI correlates a launch with the top of the thread's CUSTOM1 stack). The link is
//! an external-correlation record, which CUPTI writes only while a trace window has
//! the RUNTIME and EXTERNAL_CORRELATION kinds on: GPU work outside windows is counted
//! as not in any annotation's reach.
//!
//! Two walks of the slice: the first gathers the links (few: window time only), the
//! second sums the GPU work, so memory holds the links and not every GPU op.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::dump::{Dump, DumpError};
use crate::{walk_slice, DecodeProgress, ExternalCorrelationKind, Record, TimeRange};

/// The GPU work launched under one annotation name (all its instances).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeTime {
    pub name: String,
    /// Times the name was pushed over the GPU work counted (distinct annotation ids).
    pub instances: u64,
    pub kernels: u64,
    pub kernel_ns: u64,
    /// Copies and memsets.
    pub transfers: u64,
    pub transfer_ns: u64,
}

/// GPU time by annotation name over `range`, the largest total first; and the GPU
/// work outside any annotation's reach (its name empty).
#[derive(Debug, Clone, Default)]
pub struct RangeTimes {
    pub ranges: Vec<RangeTime>,
    pub outside: RangeTime,
}

/// Sum the GPU work of `range` by the annotation it was launched in.
pub fn gpu_time_by_annotation(
    dump: &Dump,
    range: &TimeRange,
    mut progress: impl FnMut(&DecodeProgress),
) -> Result<RangeTimes, DumpError> {
    let mut annotation_of: FxHashMap<u32, u64> = FxHashMap::default();
    walk_slice(dump, range, &mut progress, |_, _, record| {
        if let Record::ExternalCorrelation(x) = record {
            if x.external_kind == ExternalCorrelationKind::CUSTOM1.0 && x.correlation_id != 0 {
                annotation_of.insert(x.correlation_id, x.external_id);
            }
        }
    })?;
    let mut by_id: BTreeMap<u64, RangeTime> = BTreeMap::new();
    let mut outside = RangeTime::default();
    walk_slice(dump, range, &mut progress, |_, _, record| {
        let (correlation, ns, kernel) = match record {
            Record::Kernel(k) => (k.correlation_id, k.end.saturating_sub(k.start), true),
            Record::Memcpy(m) => (m.correlation_id, m.end.saturating_sub(m.start), false),
            Record::Memset(m) => (m.correlation_id, m.end.saturating_sub(m.start), false),
            _ => return,
        };
        let into = match annotation_of.get(&correlation) {
            Some(&id) => by_id.entry(id).or_default(),
            None => &mut outside,
        };
        if kernel {
            into.kernels += 1;
            into.kernel_ns += ns;
        } else {
            into.transfers += 1;
            into.transfer_ns += ns;
        }
    })?;
    let names = dump.user_annotations_named(&by_id.keys().copied().collect::<BTreeSet<_>>())?;
    let ranges = merge_range_times(by_id.into_iter().map(|(id, time)| {
        // An id the dump's log does not name (cut by a kill) still counts, by number.
        let name = names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("(annotation {id})"));
        RangeTime {
            name,
            instances: 1,
            ..time
        }
    }));
    Ok(RangeTimes { ranges, outside })
}

/// Rows of the same name summed, the largest total first (as `cupmon stats` orders).
pub fn merge_range_times(rows: impl IntoIterator<Item = RangeTime>) -> Vec<RangeTime> {
    let mut by_name: BTreeMap<String, RangeTime> = BTreeMap::new();
    for r in rows {
        let sum = by_name.entry(r.name.clone()).or_insert_with(|| RangeTime {
            name: r.name.clone(),
            ..RangeTime::default()
        });
        sum.instances += r.instances;
        sum.kernels += r.kernels;
        sum.kernel_ns += r.kernel_ns;
        sum.transfers += r.transfers;
        sum.transfer_ns += r.transfer_ns;
    }
    let mut rows: Vec<RangeTime> = by_name.into_values().collect();
    rows.sort_by(|a, b| {
        (b.kernel_ns + b.transfer_ns)
            .cmp(&(a.kernel_ns + a.transfer_ns))
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}
