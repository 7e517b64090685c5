//! One rank's figures per period, from one walk of its dump: per kernel name and
//! launch configuration the launches and their GPU time (NCCL kernels apart: a rank
//! that waits in a collective is waiting, not computing), and what the live signals
//! show (kernels, busy time, time in NCCL kernels, the last kernel's end).
//!
//! A kernel counts in the period its start falls in, with its whole duration; busy
//! time is the union of the kernels' intervals per device, clipped to the period.
//! Kernels without a time (an end of 0 at a forced flush, a start of 0 before
//! collection) are counted as launches only.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use cupmon_records::nccl::NcclKernel;
use cupmon_records::{walk_slice, Dump, IntervalUnion, KernelNames, Record, TimeRange};
use serde::Serialize;

use crate::key::{KernelKey, Totals};
use crate::StragglerError;

/// One rank in one period.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PeriodTotals {
    /// Timed compute (non-NCCL) kernels by name and launch configuration.
    #[serde(serialize_with = "key_list")]
    pub compute: HashMap<KernelKey, Totals>,
    /// Every kernel launch whose start falls in the period, timed or not.
    pub kernels: u64,
    /// Union of kernel intervals per device, summed over devices.
    pub busy_ns: u64,
    /// Union of NCCL kernel intervals per device, summed over devices.
    pub nccl_ns: u64,
    /// Devices that ran a kernel in the period.
    pub devices: usize,
    /// The latest kernel end in the period (0: none).
    pub last_end_ns: u64,
}

impl PeriodTotals {
    /// GPU time of the compute kernels.
    pub fn compute_ns(&self) -> u64 {
        self.compute.values().map(|t| t.ns).sum()
    }

    pub fn compute_launches(&self) -> u64 {
        self.compute.values().map(|t| t.launches).sum()
    }
}

fn key_list<S: serde::Serializer>(
    map: &HashMap<KernelKey, Totals>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut rows: Vec<(&KernelKey, &Totals)> = map.iter().collect();
    rows.sort_by(|a, b| a.0.cmp(b.0));
    s.collect_seq(rows.into_iter().map(|(k, t)| {
        serde_json::json!({
            "name": k.name, "grid": k.grid, "block": k.block,
            "launches": t.launches, "ns": t.ns,
        })
    }))
}

/// A launch as the walk sees it: name pointer, grid, block (named once at the end).
type RawKey = (u64, [i32; 3], [i32; 3]);

/// One rank's dump, by period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankTotals {
    /// `rank 3`, else `pid 4242`, else the directory's name.
    pub label: String,
    pub rank: Option<i64>,
    pub dir: PathBuf,
    /// Period start (Unix ns, a multiple of the period) -> totals.
    pub periods: BTreeMap<u64, PeriodTotals>,
    /// What the walk had to skip (damage, unresolved names), to print.
    pub warnings: Vec<String>,
}

/// `dump`'s records in `range`, by periods of `period_ns` aligned on the Unix epoch
/// (whole minutes for a minute), so that every rank's periods line up.
pub fn collect(
    dump: &Dump,
    range: &TimeRange,
    period_ns: u64,
) -> Result<RankTotals, StragglerError> {
    if period_ns == 0 {
        return Err(StragglerError::ZeroPeriod);
    }
    let mut names = KernelNames::new(dump.kernel_names());
    // name pointer -> (name, is NCCL), looked up once per pointer.
    let mut by_ptr: HashMap<u64, (String, bool)> = HashMap::new();
    let mut raw: BTreeMap<u64, HashMap<RawKey, Totals>> = BTreeMap::new();
    let mut periods: BTreeMap<u64, PeriodTotals> = BTreeMap::new();
    let mut unions = Unions::default();
    let report = walk_slice(
        dump,
        range,
        |_| {},
        |_, _, record| {
            let Record::Kernel(k) = record else { return };
            let timed = k.start > 0 && k.end > k.start;
            let at = if k.start > 0 { k.start } else { k.end };
            if at == 0 {
                return;
            }
            let period = at / period_ns * period_ns;
            let p = periods.entry(period).or_default();
            p.kernels += 1;
            if !timed {
                return;
            }
            p.last_end_ns = p.last_end_ns.max(k.end);
            let (_, nccl) = by_ptr.entry(k.name_ptr).or_insert_with(|| {
                let (name, _) = names.name(k.name_ptr);
                (name.to_owned(), NcclKernel::parse(name).is_some())
            });
            let nccl = *nccl;
            unions.add(period, period_ns, k.device_id, k.start, k.end, nccl);
            if !nccl {
                raw.entry(period)
                    .or_default()
                    .entry((k.name_ptr, k.grid(), k.block()))
                    .or_default()
                    .add(k.end - k.start);
            }
        },
    )
    .map_err(|err| StragglerError::Dump {
        dir: dump.dir().to_path_buf(),
        err,
    })?;
    for ((period, _device), (all, nccl)) in unions.finish() {
        let p = periods.entry(period).or_default();
        p.busy_ns += all;
        p.nccl_ns += nccl;
        p.devices += 1;
    }
    for (period, keys) in raw {
        let p = periods.entry(period).or_default();
        for ((ptr, grid, block), t) in keys {
            let name = by_ptr.get(&ptr).map_or_else(String::new, |n| n.0.clone());
            p.compute
                .entry(KernelKey { name, grid, block })
                .or_default()
                .merge(&t);
        }
    }
    let mut warnings: Vec<String> = report.warnings.iter().map(|w| w.to_string()).collect();
    if names.unresolved() > 0 {
        warnings.push(format!(
            "{}: {} kernel name pointers not in kernel_names.tsv (shown as kernel@0x...)",
            dump.dir().display(),
            by_ptr
                .values()
                .filter(|(n, _)| n.starts_with("kernel@0x"))
                .count()
        ));
    }
    Ok(RankTotals {
        periods,
        warnings,
        ..RankTotals::empty(dump)
    })
}

impl RankTotals {
    /// `dump`'s rank with no periods yet.
    fn empty(dump: &Dump) -> Self {
        let rank = dump.rank();
        let label = match (rank, dump.meta().json().get("pid").and_then(|p| p.as_i64())) {
            (Some(r), _) => format!("rank {r}"),
            (None, Some(pid)) => format!("pid {pid}"),
            (None, None) => dump.dir().file_name().map_or_else(
                || "process".to_owned(),
                |n| n.to_string_lossy().into_owned(),
            ),
        };
        Self {
            label,
            rank,
            dir: dump.dir().to_path_buf(),
            periods: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }
}

/// [`collect`] of only the periods starting at `starts` (each a multiple of
/// `period_ns`), each run of consecutive periods read as one slice: what a reader that
/// has the rest from digests (`cupmon report`) can afford on a day-long dump.
pub fn collect_periods(
    dump: &Dump,
    starts: &[u64],
    period_ns: u64,
) -> Result<RankTotals, StragglerError> {
    let mut starts = starts.to_vec();
    starts.sort_unstable();
    starts.dedup();
    let mut all = RankTotals::empty(dump);
    let mut i = 0;
    while i < starts.len() {
        let mut j = i + 1;
        while j < starts.len() && starts[j] == starts[j - 1].saturating_add(period_ns) {
            j += 1;
        }
        let end = starts[j - 1].saturating_add(period_ns);
        let mut run = collect(dump, &TimeRange::new(Some(starts[i]), Some(end)), period_ns)?;
        // The slice also holds kernels that started before it and ran into it.
        for start in &starts[i..j] {
            if let Some(p) = run.periods.remove(start) {
                all.periods.insert(*start, p);
            }
        }
        all.warnings.append(&mut run.warnings);
        i = j;
    }
    Ok(all)
}

/// Disjoint stretches a period's union holds before it sums the oldest half: a
/// period's records come nearly in time order, so little is lost, and a long dump's
/// many periods stay small.
const UNION_LIMIT: usize = 4096;

/// Busy time per (period, device), all kernels and NCCL kernels, each period's
/// intervals clipped to it.
#[derive(Default)]
struct Unions {
    open: BTreeMap<(u64, u32), (IntervalUnion, IntervalUnion)>,
}

impl Unions {
    fn add(&mut self, period: u64, period_ns: u64, device: u32, start: u64, end: u64, nccl: bool) {
        // A kernel running across a period's end is cut there; its tail goes to the
        // periods it runs into.
        let mut from = period;
        let mut start = start;
        while start < end {
            let to = from.saturating_add(period_ns);
            let piece_end = end.min(to);
            let (all, n) = self.open.entry((from, device)).or_insert_with(|| {
                (
                    IntervalUnion::with_limit(UNION_LIMIT),
                    IntervalUnion::with_limit(UNION_LIMIT),
                )
            });
            all.add(start, piece_end);
            if nccl {
                n.add(start, piece_end);
            }
            start = piece_end;
            from = to;
        }
    }

    fn finish(self) -> impl Iterator<Item = ((u64, u32), (u64, u64))> {
        self.open
            .into_iter()
            .map(|(key, (mut all, mut nccl))| (key, (all.total().0, nccl.total().0)))
    }
}
