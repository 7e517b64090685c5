//! Every kernel accounted for: the meta's `launches` entry, where the monitor keeps
//! its own count of kernels launched (CUPTI's launch callbacks, independent of the
//! activity records), the kernel records it wrote, and the times CUPTI delivered
//! nothing while launches went on (gaps) with what cupmon did about them
//! (recoveries). From it and the dropped-records count, [`KernelAccount`]:
//! launched = recorded (kept + retired) + counted as dropped + unaccounted.
//! Unaccounted kernels are the loss nothing else shows (CUPTI neither recorded nor
//! counted them); a dump without the entry says the launches were not counted,
//! never zero.

use serde::{Deserialize, Serialize};

use super::MetaFile;

/// The meta key of [`LaunchLedger`].
pub const LAUNCHES_KEY: &str = "launches";

/// The monitor's launch counts and delivery gaps, as written in the meta.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchLedger {
    /// False when cupmon could not count (see `not_counted`).
    pub counted: bool,
    /// Why the launches were not counted (another CUPTI subscriber came first, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_counted: Option<String>,
    /// Kernels launched during the session (eagerly and by graphs).
    pub kernels_launched: u64,
    /// Kernel records the monitor wrote (those kept and those retired since).
    pub kernels_recorded: u64,
    #[serde(default)]
    pub graph_launches: u64,
    /// Graph launches whose kernels could not be counted (graphs instantiated before
    /// counting began, conditional nodes): `kernels_launched` is then a lower bound.
    #[serde(default)]
    pub unsized_graph_launches: u64,
    /// Why graph launches may be unsized, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_note: Option<String>,
    /// Stretches where CUPTI delivered nothing while kernels were launched.
    #[serde(default)]
    pub gaps: Vec<DeliveryGap>,
    /// What cupmon did to get CUPTI delivering again, in order: the first
    /// [`MAX_LISTED_RECOVERIES`] of them (a stall that lasts hours must not grow the
    /// meta without bound); the rest are counted in `recoveries_not_listed`.
    #[serde(default)]
    pub recoveries: Vec<Recovery>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recoveries_not_listed: u64,
    /// When the unaccounted kernels were launched, to the flush period (absent in
    /// dumps written before it was kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub losses: Vec<LossRange>,
}

/// How many recovery actions the meta lists one by one.
pub const MAX_LISTED_RECOVERIES: usize = 48;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A stretch in which CUPTI delivered no buffer while kernels were launched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryGap {
    /// Unix ns of the last delivery before it.
    pub from_unix_ns: u64,
    /// Unix ns of the first delivery after it; `None`: still open when the meta was
    /// written (or the session ended in it).
    #[serde(default)]
    pub to_unix_ns: Option<u64>,
    /// Kernels launched from its start to its end (not all of them need be lost:
    /// CUPTI may deliver some once it recovers).
    pub kernels_launched: u64,
    /// The action after which CUPTI delivered again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_by: Option<String>,
}

/// Kernels that went unaccounted, placed in time to the flush period: their number
/// and the flush period in which the shortfall of records against the launch counter
/// arose and never came back (see cupmon-monitor's `loss_ranges.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossRange {
    pub from_unix_ns: u64,
    pub to_unix_ns: u64,
    pub kernels: u64,
}

/// One action cupmon took against a gap.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    pub at_unix_ns: u64,
    /// `forced_flush`, `kinds_reenabled`, `callbacks_registered`.
    pub action: String,
    /// Whether CUPTI delivered again before the next action.
    pub worked: bool,
}

impl LaunchLedger {
    /// The meta's entry, `None` when it has none (older dumps, PyTorch's monitor) or
    /// an unreadable one.
    pub fn from_meta(meta: &MetaFile) -> Option<Self> {
        serde_json::from_value(meta.json().get(LAUNCHES_KEY)?.clone()).ok()
    }

    pub fn write_to(&self, meta: &mut MetaFile) {
        if let Ok(value) = serde_json::to_value(self) {
            meta.set(LAUNCHES_KEY, value);
        }
    }
}

/// A dump's kernels: launched, recorded, dropped and unaccounted, or why not known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum KernelAccount {
    /// Launches were not counted: the dump predates the counter, or cupmon could not
    /// subscribe. Nothing can be said of unaccounted kernels.
    NotCounted {
        reason: String,
    },
    Counted(Counted),
}

/// The numbers of a counted dump.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counted {
    pub launched: u64,
    /// Recorded kernels, kept in the dump or retired to keep its budget.
    pub recorded: u64,
    /// Records CUPTI counted as dropped (of every kind), `None` when unknown.
    pub dropped: Option<u64>,
    /// launched - recorded - dropped, when that is known.
    pub unaccounted: Option<u64>,
    /// Why `launched` (and `unaccounted`) is a lower bound, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<String>,
    /// The counts are as of the meta's last update: the session did not close.
    #[serde(default)]
    pub not_final: bool,
    #[serde(default)]
    pub gaps: Vec<DeliveryGap>,
    #[serde(default)]
    pub recoveries: Vec<Recovery>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recoveries_not_listed: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub losses: Vec<LossRange>,
}

/// What a dump without the `launches` entry says.
pub const NOT_COUNTED_OLD: &str =
    "launches not counted (the dump was written without cupmon's launch counter)";

impl KernelAccount {
    /// The account of the dump whose meta this is.
    pub fn of(meta: &MetaFile) -> Self {
        let Some(ledger) = LaunchLedger::from_meta(meta) else {
            return Self::NotCounted {
                reason: NOT_COUNTED_OLD.to_owned(),
            };
        };
        if !ledger.counted {
            return Self::NotCounted {
                reason: format!(
                    "launches not counted: {}",
                    ledger
                        .not_counted
                        .as_deref()
                        .unwrap_or("no reason recorded")
                ),
            };
        }
        let dropped = meta.dropped_records();
        let lower_bound = (ledger.unsized_graph_launches > 0).then(|| {
            format!(
                "{} graph launches of graphs whose kernels cupmon could not count{}",
                ledger.unsized_graph_launches,
                ledger
                    .graph_note
                    .as_deref()
                    .map_or_else(String::new, |n| format!(" ({n})"))
            )
        });
        let unaccounted = dropped.map(|d| {
            ledger
                .kernels_launched
                .saturating_sub(ledger.kernels_recorded.saturating_add(d))
        });
        Self::Counted(Counted {
            launched: ledger.kernels_launched,
            recorded: ledger.kernels_recorded,
            dropped,
            unaccounted,
            lower_bound,
            not_final: meta.session_open(),
            gaps: ledger.gaps,
            recoveries: ledger.recoveries,
            recoveries_not_listed: ledger.recoveries_not_listed,
            losses: ledger.losses,
        })
    }

    /// Kernels neither recorded nor counted as dropped (0 when unknown).
    pub fn unaccounted(&self) -> u64 {
        match self {
            Self::Counted(c) => c.unaccounted.unwrap_or(0),
            Self::NotCounted { .. } => 0,
        }
    }

    /// One line: `kernels: 1000 launched, 990 recorded, 0 dropped, 10 unaccounted`.
    pub fn line(&self) -> String {
        match self {
            Self::NotCounted { reason } => format!("kernels: {reason}"),
            Self::Counted(c) => {
                let at_least = if c.lower_bound.is_some() {
                    "at least "
                } else {
                    ""
                };
                let dropped = c
                    .dropped
                    .map_or_else(|| "unknown".to_owned(), |d| d.to_string());
                let unaccounted = c
                    .unaccounted
                    .map_or_else(|| "unknown".to_owned(), |u| format!("{at_least}{u}"));
                // Open: what is not recorded yet may still be on its way.
                let what = if c.not_final {
                    "not recorded (yet)"
                } else {
                    "unaccounted"
                };
                let mut line = format!(
                    "kernels: {at_least}{} launched, {} recorded (kept + retired), {dropped} \
                     records counted as dropped, {unaccounted} {what}",
                    c.launched, c.recorded
                );
                if let Some(why) = &c.lower_bound {
                    line.push_str(&format!(" ({why})"));
                }
                if c.not_final {
                    line.push_str(" (as of the meta's last update: the session did not close)");
                }
                line
            }
        }
    }

    /// The loud warning when kernels are unaccounted for; `None` when none are. While
    /// a session is open, kernels not recorded yet may only be in flight: the warning
    /// then waits for a gap in CUPTI's delivery.
    pub fn warning(&self) -> Option<String> {
        let Self::Counted(c) = self else { return None };
        let n = c.unaccounted.filter(|&n| n > 0)?;
        if c.not_final && c.gaps.is_empty() {
            return None;
        }
        let gaps = c.gaps.len();
        Some(format!(
            "WARNING: {n} kernels launched were neither recorded nor counted as dropped: \
             CUPTI lost them without saying so{}. The dump is missing them.",
            if gaps > 0 {
                format!(" ({gaps} gap(s) in delivery, listed below)")
            } else {
                String::new()
            }
        ))
    }

    /// One line per gap and recovery, for stats and the run summary.
    pub fn detail_lines(&self, when: impl Fn(u64) -> String) -> Vec<String> {
        let Self::Counted(c) = self else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        for l in &c.losses {
            lines.push(format!(
                "unaccounted: {} kernels launched between {} and {}",
                l.kernels,
                when(l.from_unix_ns),
                when(l.to_unix_ns)
            ));
        }
        for g in &c.gaps {
            let to = g.to_unix_ns.map_or_else(|| "the end".to_owned(), &when);
            let by = g.recovered_by.as_deref().map_or_else(
                || "not recovered".to_owned(),
                |a| format!("recovered by {a}"),
            );
            lines.push(format!(
                "gap in delivery: {} to {to}, {} kernels launched meanwhile, {by}",
                when(g.from_unix_ns),
                g.kernels_launched
            ));
        }
        if !c.recoveries.is_empty() {
            let worked = c.recoveries.iter().filter(|r| r.worked).count();
            // Counted per action, in the order first tried: a long stall tries each
            // many times, and one line must still say what was done.
            let mut actions: Vec<(&str, usize)> = Vec::new();
            for r in &c.recoveries {
                match actions.iter_mut().find(|(a, _)| *a == r.action) {
                    Some((_, n)) => *n += 1,
                    None => actions.push((&r.action, 1)),
                }
            }
            let listed: Vec<String> = actions.iter().map(|(a, n)| format!("{a} x{n}")).collect();
            let more = match c.recoveries_not_listed {
                0 => String::new(),
                n => format!(", and {n} more not listed"),
            };
            lines.push(format!(
                "recoveries: {} ({worked} brought records back): {}{more}",
                c.recoveries.len() as u64 + c.recoveries_not_listed,
                listed.join(", ")
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_with(ledger: Option<&LaunchLedger>, dropped: u64, open: bool) -> MetaFile {
        let mut meta = MetaFile::new();
        meta.set("dropped_records", dropped)
            .set("session_open", open);
        if let Some(l) = ledger {
            l.write_to(&mut meta);
        }
        meta
    }

    #[test]
    fn an_old_dump_without_the_counter_reads_as_not_counted_never_zero() {
        let account = KernelAccount::of(&meta_with(None, 0, false));
        assert_eq!(
            account,
            KernelAccount::NotCounted {
                reason: NOT_COUNTED_OLD.to_owned()
            }
        );
        assert!(account.line().contains("not counted"), "{}", account.line());
        assert_eq!(account.warning(), None);
    }

    #[test]
    fn launched_is_recorded_plus_dropped_plus_unaccounted() {
        let ledger = LaunchLedger {
            counted: true,
            kernels_launched: 1000,
            kernels_recorded: 900,
            gaps: vec![DeliveryGap {
                from_unix_ns: 1,
                to_unix_ns: Some(2),
                kernels_launched: 80,
                recovered_by: Some("forced_flush".into()),
            }],
            ..LaunchLedger::default()
        };
        let account = KernelAccount::of(&meta_with(Some(&ledger), 30, false));
        let KernelAccount::Counted(c) = &account else {
            panic!("{account:?}")
        };
        assert_eq!(c.unaccounted, Some(70));
        assert_eq!(
            c.launched,
            c.recorded + c.dropped.unwrap() + c.unaccounted.unwrap()
        );
        assert!(account.warning().unwrap().contains("70 kernels"));
        assert!(
            account.line().ends_with("70 unaccounted"),
            "{}",
            account.line()
        );
        let details = account.detail_lines(|ns| ns.to_string());
        assert!(details[0].contains("80 kernels launched meanwhile, recovered by forced_flush"));
    }

    #[test]
    fn unsized_graph_launches_make_the_counts_lower_bounds() {
        let ledger = LaunchLedger {
            counted: true,
            kernels_launched: 100,
            kernels_recorded: 90,
            unsized_graph_launches: 3,
            ..LaunchLedger::default()
        };
        let account = KernelAccount::of(&meta_with(Some(&ledger), 0, true));
        let line = account.line();
        assert!(line.contains("at least 100 launched"), "{line}");
        assert!(line.contains("at least 10 not recorded (yet)"), "{line}");
        assert_eq!(account.warning(), None, "in flight, no gap: no alarm");
        assert!(line.contains("did not close"), "{line}");
    }

    #[test]
    fn a_refused_subscription_says_why() {
        let ledger = LaunchLedger {
            counted: false,
            not_counted: Some("another CUPTI callback subscriber came first".into()),
            ..LaunchLedger::default()
        };
        let account = KernelAccount::of(&meta_with(Some(&ledger), 0, false));
        assert!(account
            .line()
            .contains("another CUPTI callback subscriber came first"));
        assert_eq!(account.unaccounted(), 0);
    }

    #[test]
    fn a_long_stalls_recoveries_read_as_one_line_per_action_not_one_word_per_try() {
        // The H200's 9-minute burst printed 193 action names on one line.
        let actions = ["forced_flush", "kinds_reenabled", "callbacks_registered"];
        let ledger = LaunchLedger {
            counted: true,
            kernels_launched: 10,
            recoveries: (0..5)
                .map(|i| Recovery {
                    at_unix_ns: i,
                    action: actions[i as usize % 3].into(),
                    worked: false,
                })
                .collect(),
            recoveries_not_listed: 10,
            ..LaunchLedger::default()
        };
        let lines =
            KernelAccount::of(&meta_with(Some(&ledger), 0, false)).detail_lines(|t| t.to_string());
        assert_eq!(
            lines,
            [
                "recoveries: 15 (0 brought records back): forced_flush x2, kinds_reenabled x2, \
              callbacks_registered x1, and 10 more not listed"
            ]
        );
    }
}
