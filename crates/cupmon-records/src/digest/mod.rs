//! A digest: every number `cupmon stats` and `cupmon report` show of a part of a dump,
//! in a form that adds up. The dump writer keeps one per segment as it writes it and
//! stores it beside the segment when the segment closes (`seg-NNNNNN.digest`), so that
//! `stats` and `report` of a 24-hour dump read a few kilobytes per segment instead of
//! every record. Readers digest the segments that have none (the active one, one a
//! killed process left, one whose writer fell behind) from their records, with the
//! same [`DigestBuilder`]: one code path, whichever way the numbers come.
//!
//! What a digest holds: records per kind, time span, per kernel name pointer the
//! launches, times and a duration histogram, copies by kind and the largest ones,
//! NCCL's share per device, per-stream busy time, and the kernels, busy time per device
//! and copy bytes in one-second bins (Unix-second aligned), for all kernels and for
//! NCCL's alone.
//!
//! Unions of intervals (busy times) are exact within a digest; two digests' unions add
//! up, which counts twice the rare overlap of two kernels that ran side by side in the
//! last buffers of one segment and the first of the next. A timeline bin is never more
//! than its length.

mod builder;
pub mod copies;
pub mod durations;
mod file;
mod second_bins;
pub mod streams;
mod summarize;
mod verified_marks;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::nccl::CollectiveStats;

pub use builder::DigestBuilder;
pub use file::{check_digest, digest_file_name, read_digest, stored_digest, write_digest};
pub use second_bins::SecondBins;

/// One second in ns: the digests' bin.
pub const fn second_bins_ns() -> u64 {
    second_bins::NS_PER_S
}
pub use summarize::{
    summarize, summarize_on_grid, SliceLaunches, Summary, SummaryGrid, SummaryTimelines,
};
pub use verified_marks::remember_verified_segments_in;

use copies::CopyStats;
use durations::Durations;
use streams::StreamBusy;

/// Bumped whenever the digest's meaning changes: readers use only digests of their
/// own version and digest the records of others.
pub const DIGEST_VERSION: u32 = 1;

/// One kernel name pointer's launches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelTotals {
    pub name_ptr: u64,
    pub launches: u64,
    /// Launches with both timestamps (`end >= start > 0`).
    pub timed: u64,
    pub total_ns: u64,
    pub min_ns: Option<u64>,
    pub max_ns: u64,
    pub durations: Durations,
}

impl KernelTotals {
    pub fn add(&mut self, start: u64, end: u64) {
        self.launches += 1;
        if start != 0 && end >= start {
            let d = end - start;
            self.timed += 1;
            self.total_ns += d;
            self.min_ns = Some(self.min_ns.map_or(d, |m| m.min(d)));
            self.max_ns = self.max_ns.max(d);
            self.durations.add(d);
        }
    }

    pub fn merge(&mut self, o: &KernelTotals) {
        self.launches += o.launches;
        self.timed += o.timed;
        self.total_ns += o.total_ns;
        self.min_ns = match (self.min_ns, o.min_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max_ns = self.max_ns.max(o.max_ns);
        self.durations.merge(&o.durations);
    }
}

/// See the module docs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Digest {
    pub version: u32,
    /// Buffers (chunks, frames) and their activity bytes.
    pub chunks: u64,
    pub buffer_bytes: u64,
    pub records: u64,
    /// CUPTI kind number -> records.
    pub records_by_kind: BTreeMap<u32, u64>,
    /// Earliest non-zero start and latest end (Unix ns).
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    /// Records with a time interval whose start is 0 (unknown): a slice leaves them out.
    pub zero_start: u64,
    /// Records on another client's clock, not digested (a reader converts and digests
    /// them from the records).
    pub foreign: u64,
    /// Records the writer did not digest (it was falling behind CUPTI).
    pub skipped: u64,
    /// By name pointer.
    pub kernels: Vec<KernelTotals>,
    pub memcpy_bytes: u64,
    pub copies: CopyStats,
    /// Not truncated.
    pub collectives: CollectiveStats,
    pub streams: Vec<StreamBusy>,
    /// One-second bins of all kernels and of NCCL's (`None` outside a segment's digest).
    pub bins: Option<SecondBins>,
    pub nccl_bins: Option<SecondBins>,
    /// Kernels and copies outside the bins' span (the bins are then incomplete).
    pub unbinned: u64,
    /// A segment's digest: the dump's id (16 hex digits) and the segment's number, so
    /// that a digest is used only for its own segment (none before the seal, and in
    /// digests built by readers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u32>,
    /// A segment's digest: the session's launch counter when the segment opened and
    /// when it closed (taken by the writer at each roll, never per launch); `None`:
    /// not counted (the session did not count launches, a digest older than the
    /// counting, or a digest built by a reader).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_counter: Option<LaunchCounterSpan>,
}

/// The launch counter's readings (kernels launched since the session began counting)
/// at a segment's open and close. The kernels launched while the segment was open
/// are their difference; their records may land in the next segment (CUPTI delivers
/// them up to a flush period later), so a slice's launches and records agree to
/// about a flush period at its ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchCounterSpan {
    pub at_open: u64,
    pub at_close: u64,
}

impl LaunchCounterSpan {
    /// Kernels launched while the segment was open.
    pub fn kernels_launched(&self) -> u64 {
        self.at_close.saturating_sub(self.at_open)
    }
}

impl Digest {
    /// Whether this digest holds all of its segment's records, converted.
    pub fn is_whole(&self) -> bool {
        self.version == DIGEST_VERSION && self.foreign == 0 && self.skipped == 0
    }

    /// Add the totals of `other` (not its bins: see [`DigestBuilder::absorb`]).
    pub fn merge_totals(&mut self, o: &Digest) {
        self.chunks += o.chunks;
        self.buffer_bytes += o.buffer_bytes;
        self.records += o.records;
        for (&k, &n) in &o.records_by_kind {
            *self.records_by_kind.entry(k).or_default() += n;
        }
        self.first_ns = match (self.first_ns, o.first_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_ns = self.last_ns.max(o.last_ns);
        self.zero_start += o.zero_start;
        self.foreign += o.foreign;
        self.skipped += o.skipped;
        for k in &o.kernels {
            match self
                .kernels
                .binary_search_by_key(&k.name_ptr, |x| x.name_ptr)
            {
                Ok(i) => self.kernels[i].merge(k),
                Err(i) => self.kernels.insert(i, k.clone()),
            }
        }
        self.memcpy_bytes += o.memcpy_bytes;
        self.copies.merge(&o.copies, 0);
        self.collectives.merge(&o.collectives);
        streams::merge_streams(&mut self.streams, &o.streams);
        self.unbinned += o.unbinned;
    }
}
