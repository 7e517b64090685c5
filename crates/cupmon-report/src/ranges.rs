//! GPU time by range name (NVTX ranges, `cupmon.annotate`) for the report: CUPTI links
//! launches to annotations only inside trace windows, so only the windows' spans are
//! walked ([`gpu_time_by_annotation`], as `cupmon stats --by-range`), a short read
//! however long the dump.

use std::collections::BTreeMap;

use cupmon_records::{gpu_time_by_annotation, Dump, DumpError, RangeTime, TimeRange};

use crate::windows::WindowMark;

/// The GPU work of each range name over `windows` within `range`, largest first.
pub fn window_range_times(
    dump: &Dump,
    range: &TimeRange,
    windows: &[WindowMark],
) -> Result<Vec<RangeTime>, DumpError> {
    let mut times = Vec::new();
    for w in windows {
        let Some((start, end)) = w.span else { continue };
        let from = range.from_ns.map_or(start, |f| f.max(start));
        let to = range.to_ns.map_or(end + 1, |t| t.min(end + 1));
        if from >= to {
            continue;
        }
        let slice = TimeRange {
            from_ns: Some(from),
            to_ns: Some(to),
        };
        times.extend(gpu_time_by_annotation(dump, &slice, |_| {})?.ranges);
    }
    Ok(merge(times))
}

/// Rows of the same name summed, the largest total first (as `cupmon stats` orders).
pub fn merge(rows: impl IntoIterator<Item = RangeTime>) -> Vec<RangeTime> {
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
