//! The datasets, one file each: the columns (declared once with `dataset!`) and how
//! a record becomes a row. `dumps` describes the exports themselves.

mod api;
mod dumps;
mod kernels;
mod memcpy;
mod memset;
mod off_clock;
mod stacks;

pub use api::ApiRows;
pub use dumps::{DumpRow, DumpRows};
pub use kernels::{nccl_collective, KernelRows};
pub use memcpy::MemcpyRows;
pub use memset::MemsetRows;
pub use off_clock::OffClockRows;
pub use stacks::{StackFrameRow, StackRows};

use crate::schema::DatasetSpec;
use crate::table::Rows;

/// Every dataset, in the order they are documented.
pub const DATASETS: [DatasetSpec; 7] = [
    KernelRows::SPEC,
    MemcpyRows::SPEC,
    MemsetRows::SPEC,
    ApiRows::SPEC,
    OffClockRows::SPEC,
    StackRows::SPEC,
    DumpRows::SPEC,
];

/// A span's duration: `end - start`, or NULL when the record has no times (`start`
/// 0: before collection; `end` before `start`: unfinished at a forced flush), as
/// `cupmon stats` counts them.
pub(crate) fn duration(start: u64, end: u64) -> Option<i64> {
    (start != 0 && end >= start).then(|| (end - start) as i64)
}

/// CUPTI's 0 for "none" (no graph, no queued time) as NULL: writing a NULL costs a
/// definition level, a value costs an encoded value (several times more).
pub(crate) fn nonzero(v: i64) -> Option<i64> {
    (v != 0).then_some(v)
}
