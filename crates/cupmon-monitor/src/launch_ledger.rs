//! The session's launch accounting: the launch counter's reading at the start, the
//! gaps in CUPTI's delivery and what was done about them. Written into the meta
//! (`launches`, see `cupmon_records::dump::LaunchLedger`).

use std::sync::atomic::Ordering;

use cupmon_cupti::{launch_counting, launch_counts, Counting, Cupti, LaunchCounts};
use cupmon_records::dump::{DeliveryGap, LaunchLedger, Recovery};

use crate::loss_ranges::LossTrack;
use crate::stall_watch::unix_ns;
use crate::stats::Counters;

/// Launch accounting of one session.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// The counter's reading when the session began counting; `Err`: why it does not.
    baseline: Option<Result<LaunchCounts, String>>,
    /// The reading when counting stopped (the session's end).
    frozen: Option<LaunchCounts>,
    graph_note: Option<String>,
    pub gaps: Vec<DeliveryGap>,
    pub recoveries: Vec<Recovery>,
    /// Actions taken beyond the listed ones (see `MAX_LISTED_RECOVERIES`).
    pub recoveries_not_listed: u64,
    /// The deficit of records at each flush, placing the loss in time.
    losses: LossTrack,
}

impl Ledger {
    /// Starts counting (`count`), or notes why the session does not count.
    pub fn start(cupti: &'static Cupti, count: bool) -> Self {
        let baseline = if !count {
            Err("CUPMON_COUNT_LAUNCHES=0".to_owned())
        } else {
            match cupti.start_counting_launches() {
                Ok(()) => Ok(launch_counts()),
                Err(why) => {
                    cupmon_log::warn!(
                        "kernel launches are not counted, so kernels CUPTI might lose without \
                         counting them cannot be seen: {why}"
                    );
                    Err(why)
                }
            }
        };
        let graph_note = match launch_counting() {
            Counting::On { graph_note } => graph_note,
            Counting::Off { .. } => None,
        };
        let losses = match baseline {
            Ok(_) => LossTrack::start(unix_ns()),
            Err(_) => LossTrack::default(),
        };
        Self {
            baseline: Some(baseline),
            frozen: None,
            graph_note,
            gaps: Vec::new(),
            recoveries: Vec::new(),
            recoveries_not_listed: 0,
            losses,
        }
    }

    /// At a flush: the session's launches against the kernels recorded and the
    /// records dropped (`dropped`), for [`LossTrack`]. Nothing on the launch path.
    pub fn note_flush(&mut self, counters: &Counters, dropped: u64) {
        if let Some(deficit) = self.deficit(counters, dropped) {
            self.losses.note(unix_ns(), deficit);
        }
    }

    fn deficit(&self, counters: &Counters, dropped: u64) -> Option<u64> {
        let launched = self.launched()?.kernels;
        let recorded = counters.kernels.load(Ordering::Relaxed);
        Some(launched.saturating_sub(recorded.saturating_add(dropped)))
    }

    /// Stops counting: later launches are not the session's.
    pub fn freeze(&mut self, cupti: &Cupti) {
        if matches!(self.baseline, Some(Ok(_))) && self.frozen.is_none() {
            self.frozen = Some(launch_counts());
            cupti.stop_counting_launches();
        }
    }

    /// The session's launches so far; `None` when it does not count.
    pub fn launched(&self) -> Option<LaunchCounts> {
        let Some(Ok(base)) = &self.baseline else {
            return None;
        };
        Some(self.frozen.unwrap_or_else(launch_counts).since(base))
    }

    /// Why the session does not count launches now; `None` while it does.
    pub fn not_counting(&self) -> Option<String> {
        match &self.baseline {
            Some(Ok(_)) if self.frozen.is_none() => None,
            Some(Ok(_)) => Some("the session has stopped counting".to_owned()),
            Some(Err(why)) => Some(why.clone()),
            None => Some("the session has not started counting".to_owned()),
        }
    }

    /// The session's share of the launch counter's total `global`.
    pub fn session_kernels(&self, global: u64) -> Option<u64> {
        let Some(Ok(base)) = &self.baseline else {
            return None;
        };
        Some(global.saturating_sub(base.kernels))
    }

    /// The meta's entry, with the kernel records written so far and the records
    /// dropped (`dropped`).
    pub fn snapshot(&self, counters: &Counters, dropped: u64) -> LaunchLedger {
        let recorded = counters.kernels.load(Ordering::Relaxed);
        let losses = self
            .deficit(counters, dropped)
            .map(|deficit| self.losses.ranges(unix_ns(), deficit))
            .unwrap_or_default();
        match (&self.baseline, self.launched()) {
            (_, Some(n)) => LaunchLedger {
                counted: true,
                not_counted: None,
                kernels_launched: n.kernels,
                kernels_recorded: recorded,
                graph_launches: n.graph_launches,
                unsized_graph_launches: n.unsized_graph_launches,
                graph_note: self.graph_note.clone(),
                gaps: self.gaps.clone(),
                recoveries: self.recoveries.clone(),
                recoveries_not_listed: self.recoveries_not_listed,
                losses,
            },
            (baseline, None) => LaunchLedger {
                counted: false,
                not_counted: Some(match baseline {
                    Some(Err(why)) => why.clone(),
                    _ => "the session has not started counting".to_owned(),
                }),
                kernels_recorded: recorded,
                gaps: self.gaps.clone(),
                recoveries: self.recoveries.clone(),
                recoveries_not_listed: self.recoveries_not_listed,
                ..LaunchLedger::default()
            },
        }
    }
}
