//! Building a [`Digest`] from records, as the dump writer does for each segment and
//! readers do for the segments without one, and adding stored digests into it.

use std::time::Duration;

use super::second_bins::{SecondBins, NS_PER_S};
use super::streams::{merge_streams, StreamBusyBuilder};
use super::{Digest, KernelTotals, DIGEST_VERSION};
use crate::dump::KernelNameTable;
use crate::nccl::{CollectiveShare, CollectiveStats, NcclKernel};
use crate::{PtrMap, Record, Timeline, TimelineBuilder};

/// How far before its first record and after its period a segment's bins reach:
/// buffers complete out of order, and a segment closes a little late.
const SEGMENT_BINS_MARGIN: Duration = Duration::from_secs(3600);

/// See the module docs.
#[derive(Debug)]
pub struct DigestBuilder {
    digest: Digest,
    /// Name pointer -> its totals, and whether it is an NCCL kernel.
    by_ptr: PtrMap<(KernelTotals, bool)>,
    collectives: CollectiveShare,
    absorbed_collectives: CollectiveStats,
    streams: StreamBusyBuilder,
    absorbed_streams: Vec<super::streams::StreamBusy>,
    /// All kernels, NCCL's: on the caller's grid, or one-second bins for a segment.
    timeline: Option<(TimelineBuilder, TimelineBuilder)>,
    /// Whether `timeline` is a segment's own bins (stored as [`SecondBins`]).
    segment_bins: bool,
    /// A segment's period, until its first timed record places its bins.
    segment_period: Option<Duration>,
}

impl DigestBuilder {
    /// A digest with `timeline`'s bins (all kernels, NCCL's), or none.
    pub fn new(timeline: Option<(TimelineBuilder, TimelineBuilder)>) -> Self {
        Self {
            digest: Digest {
                version: DIGEST_VERSION,
                ..Digest::default()
            },
            by_ptr: PtrMap::default(),
            collectives: CollectiveShare::new(),
            absorbed_collectives: CollectiveStats::default(),
            streams: StreamBusyBuilder::default(),
            absorbed_streams: Vec::new(),
            timeline,
            segment_bins: false,
            segment_period: None,
        }
    }

    /// The digest of a segment that closes `period` after it opens: one-second bins
    /// from an hour before its first timed record to an hour after the period.
    pub fn for_segment(period: Duration) -> Self {
        let mut b = Self::new(None);
        b.segment_bins = true;
        b.segment_period = Some(period);
        b
    }

    /// The segment's bins, placed by its first timed record (at `t`).
    fn open_segment_bins(&mut self, t: u64) {
        let Some(period) = self.segment_period.take() else {
            return;
        };
        let margin = SEGMENT_BINS_MARGIN.as_nanos() as u64;
        let from = t.saturating_sub(margin) / NS_PER_S * NS_PER_S;
        let to = t
            .saturating_add(u64::try_from(period.as_nanos()).unwrap_or(u64::MAX))
            .saturating_add(margin)
            .div_ceil(NS_PER_S)
            .saturating_mul(NS_PER_S);
        let second = Duration::from_secs(1);
        let bins = TimelineBuilder::new(from, to, second)
            .and_then(|all| Ok((all, TimelineBuilder::new(from, to, second)?)));
        // A period too long for the bins: no bins (readers walk this segment's
        // records for a timeline).
        self.timeline = bins.ok();
        self.segment_bins = self.timeline.is_some();
    }

    /// A buffer of `bytes` was read or written.
    pub fn add_buffer(&mut self, bytes: u64) {
        self.digest.chunks += 1;
        self.digest.buffer_bytes += bytes;
    }

    /// `records` were not digested (the digest is then not [`Digest::is_whole`]).
    pub fn skip(&mut self, records: u64) {
        self.digest.skipped += records;
    }

    /// One record, its timestamps in Unix ns (a record on another client's clock is
    /// counted as foreign and left out); kernel names come from `names`.
    pub fn add(&mut self, record: &Record, names: &KernelNameTable) {
        let d = &mut self.digest;
        if record.has_foreign_timestamp() {
            d.foreign += 1;
            return;
        }
        d.records += 1;
        *d.records_by_kind.entry(record.kind().as_u32()).or_default() += 1;
        if let Some((start, end)) = record.interval() {
            if start != 0 {
                d.first_ns = Some(d.first_ns.map_or(start, |f| f.min(start)));
            } else {
                d.zero_start += 1;
            }
            if end != 0 {
                d.last_ns = Some(d.last_ns.map_or(end, |l| l.max(end)));
            }
        }
        if self.segment_period.is_some() {
            match record {
                Record::Kernel(k) if k.start != 0 => self.open_segment_bins(k.start),
                Record::Memcpy(m) if m.start != 0 => self.open_segment_bins(m.start),
                _ => {}
            }
        }
        let d = &mut self.digest;
        match record {
            Record::Kernel(k) => {
                let (totals, is_nccl) = self.by_ptr.entry(k.name_ptr).or_insert_with(|| {
                    let totals = KernelTotals {
                        name_ptr: k.name_ptr,
                        ..KernelTotals::default()
                    };
                    let nccl = names
                        .get(k.name_ptr)
                        .is_some_and(|n| NcclKernel::parse(n).is_some());
                    (totals, nccl)
                });
                totals.add(k.start, k.end);
                let is_nccl = *is_nccl;
                self.collectives.add_record(k, names);
                self.streams.add(k);
                if let Some((all, nccl)) = &mut self.timeline {
                    if self.segment_bins && k.start != 0 && !all.spans(k.start) {
                        d.unbinned += 1;
                    }
                    all.add(record);
                    if is_nccl {
                        nccl.add(record);
                    }
                }
            }
            Record::Memcpy(m) => {
                d.memcpy_bytes += m.bytes;
                d.copies.add(m);
                if let Some((all, _)) = &mut self.timeline {
                    if self.segment_bins && m.start != 0 && !all.spans(m.start) {
                        d.unbinned += 1;
                    }
                    all.add(record);
                }
            }
            _ => {}
        }
    }

    /// Add a stored digest's totals, and its bins into this builder's grid (which the
    /// caller has checked is [`TimelineBuilder::whole_seconds`]).
    pub fn absorb(&mut self, other: &Digest) {
        let mut totals = other.clone();
        totals.bins = None;
        totals.nccl_bins = None;
        let collectives = std::mem::take(&mut totals.collectives);
        let streams = std::mem::take(&mut totals.streams);
        let kernels = std::mem::take(&mut totals.kernels);
        self.digest.merge_totals(&totals);
        self.absorbed_collectives.merge(&collectives);
        merge_streams(&mut self.absorbed_streams, &streams);
        for k in &kernels {
            self.by_ptr
                .entry(k.name_ptr)
                .or_insert_with(|| {
                    let totals = KernelTotals {
                        name_ptr: k.name_ptr,
                        ..KernelTotals::default()
                    };
                    (totals, false)
                })
                .0
                .merge(k);
        }
        if let Some((all, nccl)) = &mut self.timeline {
            if let Some(b) = &other.bins {
                all.add_second_bins(b);
            }
            if let Some(b) = &other.nccl_bins {
                nccl.add_second_bins(b);
            }
        }
    }

    /// The digest, and the timelines on the caller's grid (none for a segment's
    /// builder, whose bins go into the digest).
    pub fn finish(mut self) -> (Digest, Option<(Timeline, Timeline)>) {
        let mut kernels: Vec<KernelTotals> = self.by_ptr.into_values().map(|(k, _)| k).collect();
        kernels.sort_unstable_by_key(|k| k.name_ptr);
        self.digest.kernels = kernels;
        let mut collectives = self.collectives.finish(usize::MAX);
        collectives.merge(&self.absorbed_collectives);
        self.digest.collectives = collectives;
        let mut streams = self.streams.finish();
        merge_streams(&mut streams, &self.absorbed_streams);
        self.digest.streams = streams;
        self.digest.copies.sort();
        let timelines = self
            .timeline
            .map(|(all, nccl)| (all.finish(None), nccl.finish(None)));
        if self.segment_bins {
            match &timelines {
                Some((all, nccl)) => {
                    self.digest.bins = Some(SecondBins::from_timeline(all));
                    self.digest.nccl_bins = Some(SecondBins::from_timeline(nccl));
                }
                // No kernel or copy with a time: bins with nothing in them.
                None if self.segment_period.is_some() => {
                    self.digest.bins = Some(SecondBins::default());
                    self.digest.nccl_bins = Some(SecondBins::default());
                }
                None => {}
            }
            return (self.digest, None);
        }
        (self.digest, timelines)
    }
}

impl Default for DigestBuilder {
    fn default() -> Self {
        Self::new(None)
    }
}
