//! cupmon-straggler: for each period (a minute), the rank of a job whose compute
//! runs slowest against the others, and the kernels (name and launch configuration)
//! that account for most of the difference. `cupmon stragglers`, the straggler
//! section of `cupmon report`, `cupmon status` and `cupmon run`'s metrics all use it.
//!
//! - [`collect`] walks one rank's dump into per-period totals ([`RankTotals`]);
//! - [`compare`] compares the ranks of one period (the measure is documented there);
//! - [`recent`]: the last minute of running ranks (`cupmon status`, metrics);
//! - [`analyse`] does both for a run into an [`Analysis`] (Display: a table; serde: JSON).

mod analysis;
mod collect;
mod compare;
mod each_dump;
mod error;
mod key;
mod live;

pub use analysis::{analyse, compare_ranks, Analysis, Options, PeriodVerdict, RankInfo, MINUTE_NS};
pub use collect::{collect, collect_periods, PeriodTotals, RankTotals};
pub use compare::{
    compare, Comparison, Culprit, RankScore, Straggler, MIN_LAUNCHES, THRESHOLD, TOP_KERNELS,
};
pub use each_dump::each_dump;
pub use error::StragglerError;
pub use key::{KernelKey, Totals};
pub use live::{recent, RankRecent, Recent};
