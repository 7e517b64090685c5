//! The analysis of a run: every rank's dump by period ([`collect`]), each period's
//! ranks compared ([`compare`]), printed as a table (Display) or JSON (serde).

use std::collections::BTreeSet;
use std::fmt;
use std::path::PathBuf;

use cupmon_config::time_spec::CivilTime;
use cupmon_records::{Dump, TimeRange};
use serde::Serialize;

use crate::collect::{collect, RankTotals};
use crate::compare::{compare, Comparison, THRESHOLD};
use crate::each_dump::each_dump;
use crate::StragglerError;

/// A minute: the period stragglers are named for.
pub const MINUTE_NS: u64 = 60_000_000_000;

/// What to analyse.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub range: TimeRange,
    /// Length of a period (a minute by default).
    pub period_ns: u64,
    /// Least score that names a straggler ([`THRESHOLD`] by default).
    pub threshold: f64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            range: TimeRange::default(),
            period_ns: MINUTE_NS,
            threshold: THRESHOLD,
        }
    }
}

/// A rank of the analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankInfo {
    pub label: String,
    pub rank: Option<i64>,
    pub dir: PathBuf,
    /// Periods in which it was the straggler.
    pub straggler_periods: u64,
}

/// One period: when, and what the comparison found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeriodVerdict {
    pub start_ns: u64,
    pub len_ns: u64,
    #[serde(flatten)]
    pub comparison: Comparison,
}

/// The stragglers of a run, period by period.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub period_ns: u64,
    pub threshold: f64,
    pub ranks: Vec<RankInfo>,
    pub periods: Vec<PeriodVerdict>,
    pub warnings: Vec<String>,
}

/// Read every dump (a core each) and compare its ranks period by period.
pub fn analyse(dumps: &[Dump], options: &Options) -> Result<Analysis, StragglerError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let totals = each_dump(dumps, threads, |d| {
        collect(d, &options.range, options.period_ns)
    })
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    Ok(compare_ranks(totals, options))
}

/// Compare ranks already collected (by [`collect`], with `options.period_ns`).
pub fn compare_ranks(totals: Vec<RankTotals>, options: &Options) -> Analysis {
    let starts: BTreeSet<u64> = totals
        .iter()
        .flat_map(|t| t.periods.keys().copied())
        .collect();
    let mut ranks: Vec<RankInfo> = totals
        .iter()
        .map(|t| RankInfo {
            label: t.label.clone(),
            rank: t.rank,
            dir: t.dir.clone(),
            straggler_periods: 0,
        })
        .collect();
    let periods: Vec<PeriodVerdict> = starts
        .into_iter()
        .map(|start| {
            let of: Vec<_> = totals.iter().map(|t| t.periods.get(&start)).collect();
            PeriodVerdict {
                start_ns: start,
                len_ns: options.period_ns,
                comparison: compare(&of, options.threshold),
            }
        })
        .collect();
    for p in &periods {
        if let Some(s) = &p.comparison.straggler {
            ranks[s.rank].straggler_periods += 1;
        }
    }
    Analysis {
        period_ns: options.period_ns,
        threshold: options.threshold,
        ranks,
        periods,
        warnings: totals.into_iter().flat_map(|t| t.warnings).collect(),
    }
}

impl Analysis {
    /// Periods that named a straggler.
    pub fn named(&self) -> impl Iterator<Item = &PeriodVerdict> {
        self.periods
            .iter()
            .filter(|p| p.comparison.straggler.is_some())
    }

    /// Each rank's score in the last period that compared it (`None`: never compared).
    pub fn latest_scores(&self) -> Vec<Option<f64>> {
        let mut out = vec![None; self.ranks.len()];
        for p in &self.periods {
            for s in &p.comparison.scores {
                out[s.rank] = Some(s.score);
            }
        }
        out
    }
}

/// `2026-12-01 14:32:00` (UTC).
fn utc(unix_ns: u64) -> String {
    let t = CivilTime::from_unix_utc(i128::from(unix_ns));
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

fn ms(ns: f64) -> String {
    format!("{:.1} ms", ns / 1e6)
}

impl fmt::Display for Analysis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let period = if self.period_ns == MINUTE_NS {
            "minute".to_owned()
        } else {
            format!("period of {} ms", self.period_ns / 1_000_000)
        };
        writeln!(
            f,
            "stragglers: {} ranks, per {period} (UTC); a rank is named when its compute \
             kernels' GPU time per unit of work is at least {:.1}% above the other ranks' median",
            self.ranks.len(),
            self.threshold * 100.0
        )?;
        let compared = self
            .periods
            .iter()
            .filter(|p| p.comparison.not_compared.is_none())
            .count();
        let named = self.named().count();
        for p in &self.periods {
            let c = &p.comparison;
            let when = utc(p.start_ns);
            match (&c.straggler, &c.not_compared) {
                (Some(s), _) => {
                    writeln!(
                        f,
                        "  {when}  {}: {:+.1}% compute ({} more per unit of work), from:",
                        self.ranks[s.rank].label,
                        s.score * 100.0,
                        ms(s.excess_ns)
                    )?;
                    for k in &s.kernels {
                        writeln!(
                            f,
                            "      {:>5.1}%  {}  {} launches, {} (others: {:.0} launches, {})",
                            k.share * 100.0,
                            k.kernel,
                            k.launches,
                            ms(k.ns as f64),
                            k.others_launches,
                            ms(k.others_ns)
                        )?;
                    }
                }
                (None, Some(why)) => writeln!(f, "  {when}  not compared: {why}")?,
                (None, None) => {
                    let worst = c.scores.iter().max_by(|a, b| a.score.total_cmp(&b.score));
                    match worst {
                        Some(w) => writeln!(
                            f,
                            "  {when}  balanced (largest: {} {:+.1}%)",
                            self.ranks[w.rank].label,
                            w.score * 100.0
                        )?,
                        None => writeln!(f, "  {when}  balanced")?,
                    }
                }
            }
        }
        write!(
            f,
            "{named} of {compared} compared periods named a straggler"
        )?;
        let counts: Vec<String> = self
            .ranks
            .iter()
            .filter(|r| r.straggler_periods > 0)
            .map(|r| format!("{} in {}", r.label, r.straggler_periods))
            .collect();
        if !counts.is_empty() {
            write!(f, ": {}", counts.join(", "))?;
        }
        writeln!(f)
    }
}
