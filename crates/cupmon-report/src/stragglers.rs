//! The report's compute stragglers (cupmon-straggler) in the minutes that matter:
//! those of the slowest period and of the periods where the others waited longest in
//! NCCL. The rest of the report comes from the segments' digests, which hold no
//! per-minute kernel totals by launch configuration, so these minutes are read as
//! slices (a few seconds for a day-long dump, where reading every record would take
//! minutes per rank); `cupmon stragglers TARGET` reads every minute.

use std::collections::BTreeSet;

use cupmon_records::Dump;
use cupmon_straggler::{collect_periods, compare_ranks, each_dump, Analysis, Options, MINUTE_NS};

use crate::{Report, ReportError};

/// At most this many minutes are read.
pub const MAX_MINUTES: usize = 12;

/// The minutes (Unix-minute starts) that `report`'s slowest and worst periods touch.
pub fn minutes_of_interest(report: &Report) -> Vec<u64> {
    let per = &report.periods;
    let mut periods: Vec<usize> = report.hint.iter().map(|h| h.period).collect();
    periods.extend(per.worst());
    let mut minutes = BTreeSet::new();
    for i in periods {
        let p = &per.periods[i];
        let last = p.start_ns + p.len_ns.max(1) - 1;
        for m in [p.start_ns, last] {
            if minutes.len() < MAX_MINUTES {
                minutes.insert(m / MINUTE_NS * MINUTE_NS);
            }
        }
    }
    minutes.into_iter().collect()
}

/// The analysis of `minutes` of every dump (`threads` dumps at a time); `None` for
/// fewer than two dumps or no minute.
pub fn analyse_minutes(
    dumps: &[Dump],
    minutes: &[u64],
    threads: usize,
) -> Result<Option<Analysis>, ReportError> {
    if dumps.len() < 2 || minutes.is_empty() {
        return Ok(None);
    }
    let totals = each_dump(dumps, threads, |d| collect_periods(d, minutes, MINUTE_NS))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(compare_ranks(totals, &Options::default())))
}
