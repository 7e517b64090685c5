//! Notices CUPTI delivering nothing while kernels are launched, and gets it going again.
//!
//! On the H200 at about 1 M kernels/s sustained, CUPTI's flushes grew to tens of
//! seconds, then CUPTI held none of cupmon's buffers, asked for none and recorded
//! nothing more, and its dropped count missed most of the loss (bench/recorder/
//! RESULTS.md). The starvation watch cannot see that state (no buffer held, none
//! refused); the launch counter can: a *gap* opens when, for `stall_periods` flush
//! periods, no buffer came back while at least `stall_kernels` kernels were launched.
//! While it lasts, one action a period, in turn: a forced flush, the activity kinds
//! disabled and enabled again, the buffer callbacks registered again. After each round
//! of the three that brought nothing back, the wait before the next action doubles (up
//! to [`MAX_BACKOFF_PERIODS`]): on the H200, 193 actions one period apart in a stall
//! of 4 minutes brought nothing back, and each costs CUPTI work while the program runs.
//! The gap closes when a buffer comes back; the gap and the actions are kept in the
//! meta (the first `MAX_LISTED_RECOVERIES` listed, the rest counted).

use std::sync::atomic::Ordering;

use cupmon_cupti::FlushFlag;
use cupmon_records::dump::{DeliveryGap, Recovery, MAX_LISTED_RECOVERIES};

use crate::shared::Shared;

/// The recovery actions, in the order they are tried.
pub(crate) const ACTIONS: [&str; 3] = ["forced_flush", "kinds_reenabled", "callbacks_registered"];

/// The longest wait, in flush periods, between two actions of a gap.
pub(crate) const MAX_BACKOFF_PERIODS: u32 = 64;

/// Flush periods to wait before the gap's next action, after `taken` actions: one
/// period through the first round, then twice as long after each round.
fn wait_before_next(taken: usize) -> u32 {
    let rounds = (taken / ACTIONS.len()) as u32;
    1u32.checked_shl(rounds)
        .unwrap_or(MAX_BACKOFF_PERIODS)
        .min(MAX_BACKOFF_PERIODS)
}

#[derive(Debug, Default)]
pub(crate) struct StallWatch {
    last_completed: u64,
    /// Kernels launched at the last buffer back, and when that was.
    launched_at_progress: u64,
    progress_unix_ns: u64,
    quiet_periods: u32,
    /// The gap in progress (index into the ledger's gaps).
    open_gap: Option<usize>,
    actions_taken: usize,
    /// Quiet periods since the gap's last action.
    since_action: u32,
    warned: bool,
}

pub(crate) fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl StallWatch {
    /// One look a flush period; true when the ledger changed (the meta should be
    /// rewritten).
    pub fn check(&mut self, shared: &'static Shared) -> bool {
        let completed = shared.counters.buffers_queued.load(Ordering::Acquire);
        let mut ledger = crate::monitor::lock(&shared.ledger);
        let Some(launched) = ledger.launched().map(|l| l.kernels) else {
            return false; // without the counter, nothing to tell a stall from a pause
        };
        let now = unix_ns();
        if self.progress_unix_ns == 0 {
            self.progress_unix_ns = now;
        }
        if completed != self.last_completed {
            let mut changed = false;
            if let Some(i) = self.open_gap.take() {
                let by = ledger_last_action(&mut ledger.recoveries);
                let Some(gap) = ledger.gaps.get_mut(i) else {
                    return false;
                };
                gap.to_unix_ns = Some(now);
                gap.kernels_launched = launched.saturating_sub(self.launched_at_progress);
                gap.recovered_by = by;
                cupmon_log::warn!(
                    "CUPTI delivers records again after {:.1} s without any, during which {} \
                     kernels were launched{}",
                    (now - gap.from_unix_ns) as f64 / 1e9,
                    gap.kernels_launched,
                    gap.recovered_by
                        .as_deref()
                        .map_or_else(String::new, |a| format!(" (after cupmon's {a})"))
                );
                changed = true;
            }
            self.last_completed = completed;
            // Where the next gap would begin: the last buffer back, and the kernels
            // launched by then (those after may be in CUPTI's hands, or lost).
            let (at_launched, at_ns) = &shared.last_delivery;
            self.launched_at_progress = ledger
                .session_kernels(at_launched.load(Ordering::Relaxed))
                .unwrap_or(launched)
                .min(launched);
            self.progress_unix_ns = at_ns.load(Ordering::Relaxed).min(now);
            self.quiet_periods = 0;
            self.actions_taken = 0;
            self.since_action = 0;
            return changed;
        }
        self.quiet_periods += 1;
        let since = launched.saturating_sub(self.launched_at_progress);
        let config = &shared.config;
        let mut changed = false;
        if let Some(i) = self.open_gap {
            if let Some(gap) = ledger.gaps.get_mut(i) {
                gap.kernels_launched = since;
            }
        } else if self.quiet_periods >= config.stall_periods && since >= config.stall_kernels {
            ledger.gaps.push(DeliveryGap {
                from_unix_ns: self.progress_unix_ns,
                to_unix_ns: None,
                kernels_launched: since,
                recovered_by: None,
            });
            self.open_gap = Some(ledger.gaps.len() - 1);
            changed = true;
            if !self.warned {
                self.warned = true;
                cupmon_log::warn!(
                    "CUPTI has delivered no records for {} flush periods while {since} kernels \
                     were launched: it has stalled, and those kernels may be lost without being \
                     counted as dropped{}",
                    self.quiet_periods,
                    if config.recover {
                        "; cupmon is trying to get it going again"
                    } else {
                        " (CUPMON_RECOVER=0: cupmon only records the gap)"
                    }
                );
            }
        }
        if self.open_gap.is_some() && config.recover {
            self.since_action += 1;
            if self.since_action < wait_before_next(self.actions_taken) {
                return changed;
            }
            self.since_action = 0;
            let action = ACTIONS[self.actions_taken % ACTIONS.len()];
            self.actions_taken += 1;
            if ledger.recoveries.len() < MAX_LISTED_RECOVERIES {
                ledger.recoveries.push(Recovery {
                    at_unix_ns: now,
                    action: action.to_owned(),
                    worked: false,
                });
            } else {
                ledger.recoveries_not_listed += 1;
            }
            // The action may call back into cupmon (completions): not under the lock.
            drop(ledger);
            take_action(shared, action);
            shared.counters.add(&shared.counters.recoveries, 1);
            changed = true;
        }
        changed
    }

    /// The session ends: a gap still open stays open (its end unknown).
    pub fn finish(&mut self, shared: &Shared) {
        if let Some(i) = self.open_gap.take() {
            let mut ledger = crate::monitor::lock(&shared.ledger);
            let launched = ledger.launched().map_or(0, |l| l.kernels);
            if let Some(gap) = ledger.gaps.get_mut(i) {
                gap.kernels_launched = launched.saturating_sub(self.launched_at_progress);
            }
        }
    }
}

/// Marks the last action as the one that worked, and names it.
fn ledger_last_action(recoveries: &mut [Recovery]) -> Option<String> {
    let last = recoveries.last_mut()?;
    last.worked = true;
    Some(last.action.clone())
}

fn take_action(shared: &'static Shared, action: &str) {
    let cupti = shared.cupti;
    let result = match action {
        "forced_flush" => cupti.flush_all(FlushFlag::FORCED),
        "kinds_reenabled" => shared
            .config
            .kinds
            .iter()
            .try_for_each(|&kind| cupti.cycle(kind)),
        _ => cupti
            .register_callbacks(shared)
            .and_then(|()| cupti.reenable_all()),
    };
    if let Err(e) = result {
        cupmon_log::warn!("recovering CUPTI ({action}): {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_that_lasts_backs_off_after_each_round_of_actions() {
        // The first round one period apart, then 2, 4, ... periods, never above the cap.
        let waits: Vec<u32> = (0..24).map(wait_before_next).collect();
        assert_eq!(&waits[..9], &[1, 1, 1, 2, 2, 2, 4, 4, 4]);
        assert_eq!(*waits.last().unwrap(), MAX_BACKOFF_PERIODS);
        assert_eq!(wait_before_next(usize::MAX / 2), MAX_BACKOFF_PERIODS);
    }
}
