//! GPU time by range name (NVTX ranges, `cupmon.annotate`) for the report: CUPTI links
//! launches to annotations only inside trace windows, so only the windows' spans are
//! walked ([`gpu_time_by_annotation`], as `cupmon stats --by-range`), a short read
//! however long the dump.

use cupmon_records::{
    gpu_time_by_annotation, merge_range_times, Dump, DumpError, RangeTime, TimeRange,
};

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
    Ok(merge_range_times(times))
}
