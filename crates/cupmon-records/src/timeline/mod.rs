//! A dump's activity in time bins, to pick a slice from: per bin, each device's busy
//! time (the union of its kernels' intervals), kernels started, and bytes copied.
//! `cupmon stats --timeline` prints it and `cupmon report` draws it: both from this
//! one computation, so that they agree on every number.
//!
//! Streaming: [`TimelineBuilder::add`] takes records one at a time (from
//! [`walk_slice`]), and memory follows the number of bins (and devices), not records.
//!
//! Rules: a kernel counts in the bin where it starts; its busy time is cut at the bin
//! boundaries (a kernel still running at a forced flush, `end = 0`, has none); a copy's
//! bytes are spread over the bins its interval overlaps, in proportion to the overlap
//! (all in its start bin when it has no duration). Only the part inside the bins' span
//! counts. Devices are those that ran a kernel in the span.

mod bin_size;
mod busy;

use std::collections::BTreeMap;
use std::time::Duration;

use busy::{Bins, DeviceBusy};

use crate::walk::{walk_slice, DecodeProgress, DecodeReport};
use crate::{Dump, DumpError, Record, TimeRange};

pub use bin_size::auto_bin;

/// The most bins a timeline holds (a bin far too small for the span is an error).
pub const MAX_BINS: u64 = 100_000;

/// Why a timeline cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error("a timeline bin of {bin_ns} ns over {span_ns} ns would make {bins} bins (at most {MAX_BINS}): use a longer bin")]
    TooManyBins {
        bin_ns: u64,
        span_ns: u64,
        bins: u64,
    },
    #[error("a timeline bin must be longer than 0")]
    ZeroBin,
    #[error(transparent)]
    Dump(#[from] DumpError),
}

/// One bin's numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineBin {
    pub start_ns: u64,
    /// The bin's length: the bin size, less for the last bin.
    pub len_ns: u64,
    /// Busy ns of each device of [`Timeline::devices`], in that order.
    pub busy_ns: Vec<u64>,
    /// Kernels that started in the bin.
    pub kernels: u64,
    /// Memcpy bytes in the bin.
    pub copy_bytes: u64,
}

impl TimelineBin {
    /// Busy time over the bin's length, averaged over the devices (0 without any).
    pub fn busy_fraction(&self) -> f64 {
        if self.busy_ns.is_empty() || self.len_ns == 0 {
            return 0.0;
        }
        let sum: u64 = self.busy_ns.iter().sum();
        sum as f64 / (self.len_ns as f64 * self.busy_ns.len() as f64)
    }

    /// Device `i`'s busy time over the bin's length.
    pub fn device_busy_fraction(&self, i: usize) -> f64 {
        self.busy_ns
            .get(i)
            .map_or(0.0, |&b| b as f64 / self.len_ns as f64)
    }

    pub fn kernels_per_s(&self) -> f64 {
        self.kernels as f64 * 1e9 / self.len_ns as f64
    }

    pub fn copy_bytes_per_s(&self) -> f64 {
        self.copy_bytes as f64 * 1e9 / self.len_ns as f64
    }
}

/// The bins of a span of a dump.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// `[from, to)` in Unix ns, cut into bins of `bin_ns` (the last may be shorter).
    pub from_ns: u64,
    pub to_ns: u64,
    pub bin_ns: u64,
    /// The devices that ran kernels, in id order.
    pub devices: Vec<u32>,
    pub bins: Vec<TimelineBin>,
    /// Busy time that may be counted twice: kernels that arrived far out of time order
    /// (0 for a dump written in order).
    pub busy_over_ns: u64,
    /// Records CUPTI dropped, in all: the dump keeps a total, not when they were
    /// dropped, so there is no per-bin count. `None` when unknown.
    pub dropped_records: Option<u64>,
}

impl Timeline {
    /// The timeline of `range` of `dump` in bins of `bin` (`None`: about 60 bins, see
    /// [`auto_bin`]); open ends of `range` are the dump's first and last record.
    pub fn from_dump(
        dump: &Dump,
        range: &TimeRange,
        bin: Option<Duration>,
        progress: impl FnMut(&DecodeProgress),
    ) -> Result<(Timeline, DecodeReport), TimelineError> {
        let mut builder = TimelineBuilder::for_dump(dump, range, bin)?;
        let report = walk_slice(dump, &builder.range(), progress, |_, _, r| builder.add(r))?;
        Ok((builder.finish(report.dropped_records), report))
    }
}

/// Builds a [`Timeline`] from records.
#[derive(Debug, Clone)]
pub struct TimelineBuilder {
    bins: Bins,
    kernels: Vec<u64>,
    copy_bytes: Vec<u64>,
    devices: BTreeMap<u32, DeviceBusy>,
}

impl TimelineBuilder {
    /// Bins of `bin` over `[from_ns, to_ns)`.
    pub fn new(from_ns: u64, to_ns: u64, bin: Duration) -> Result<Self, TimelineError> {
        let bin_ns = u64::try_from(bin.as_nanos()).unwrap_or(u64::MAX);
        if bin_ns == 0 {
            return Err(TimelineError::ZeroBin);
        }
        let bins = Bins {
            from_ns,
            to_ns: to_ns.max(from_ns),
            bin_ns,
        };
        let n = bins.count() as u64;
        if n > MAX_BINS {
            return Err(TimelineError::TooManyBins {
                bin_ns,
                span_ns: bins.to_ns - from_ns,
                bins: n,
            });
        }
        Ok(Self {
            bins,
            kernels: vec![0; n as usize],
            copy_bytes: vec![0; n as usize],
            devices: BTreeMap::new(),
        })
    }

    /// Bins over `range` of `dump`, its open ends at the dump's first record and just
    /// after its last (so that a record at the last instant is in).
    pub fn for_dump(
        dump: &Dump,
        range: &TimeRange,
        bin: Option<Duration>,
    ) -> Result<Self, TimelineError> {
        let span = match (range.from_ns, range.to_ns) {
            (Some(from), Some(to)) => Some((from, to)),
            _ => dump.time_span()?.get().map(|(first, last)| {
                (
                    range.from_ns.unwrap_or(first),
                    range.to_ns.unwrap_or(last.saturating_add(1)),
                )
            }),
        };
        let (from, to) = span.unwrap_or((range.from_ns.unwrap_or(0), 0));
        let to = to.max(from);
        let bin = bin.unwrap_or_else(|| auto_bin(to - from));
        // Bins of whole seconds over an open start begin at a whole second, where the
        // segments' digests add into them exactly (see [`Self::whole_seconds`]); a
        // start the user gave stays where it is.
        const S: u64 = crate::digest::second_bins_ns();
        let whole = bin.as_nanos().is_multiple_of(u128::from(S)) && !bin.is_zero();
        let from = if whole && range.from_ns.is_none() {
            from / S * S
        } else {
            from
        };
        Self::new(from, to, bin)
    }

    /// Whether `t` is inside the bins' span.
    pub fn spans(&self, t: u64) -> bool {
        t >= self.bins.from_ns && t < self.bins.to_ns
    }

    /// Bins of whole seconds from a whole Unix second: what digests' bins add into
    /// exactly ([`TimelineBuilder::add_second_bins`]).
    pub fn whole_seconds(&self) -> bool {
        const S: u64 = crate::digest::second_bins_ns();
        self.bins.bin_ns.is_multiple_of(S) && self.bins.from_ns.is_multiple_of(S)
    }

    /// Add a digest's one-second bins (the builder must be [`Self::whole_seconds`]);
    /// what falls outside the span is left out, as records are.
    pub fn add_second_bins(&mut self, b: &crate::digest::SecondBins) {
        debug_assert!(self.whole_seconds());
        let bins = self.bins;
        let count = bins.count();
        for i in 0..b.len() {
            let t = (b.first_s + i as u64).saturating_mul(crate::digest::second_bins_ns());
            if t < bins.from_ns || t >= bins.to_ns {
                continue;
            }
            let at = bins.of(t);
            self.kernels[at] += b.kernels[i];
            self.copy_bytes[at] += b.copy_bytes[i];
            for (d, busy) in b.devices.iter().zip(&b.busy_ns) {
                let device = self
                    .devices
                    .entry(*d)
                    .or_insert_with(|| DeviceBusy::new(count));
                device.busy_ns[at] += busy[i];
            }
        }
    }

    /// The span the bins cover, for [`walk_slice`].
    pub fn range(&self) -> TimeRange {
        TimeRange::new(Some(self.bins.from_ns), Some(self.bins.to_ns))
    }

    pub fn add(&mut self, record: &Record) {
        let bins = self.bins;
        match record {
            Record::Kernel(k) => {
                if k.start == 0 {
                    return;
                }
                let in_span = k.start >= bins.from_ns && k.start < bins.to_ns;
                if in_span {
                    self.kernels[bins.of(k.start)] += 1;
                }
                let clipped = bins.clip(k.start, k.end);
                if !in_span && clipped.is_none() {
                    return;
                }
                let device = self
                    .devices
                    .entry(k.device_id)
                    .or_insert_with(|| DeviceBusy::new(bins.count()));
                if let Some((s, e)) = clipped {
                    device.add(&bins, s, e);
                }
            }
            Record::Memcpy(m) => self.add_copy(m.start, m.end, m.bytes),
            _ => {}
        }
    }

    /// Spread `bytes` over the bins `[start, end)` overlaps; the shares add up exactly.
    fn add_copy(&mut self, start: u64, end: u64, bytes: u64) {
        let bins = self.bins;
        if start == 0 || bytes == 0 {
            return;
        }
        if end <= start {
            if start >= bins.from_ns && start < bins.to_ns {
                self.copy_bytes[bins.of(start)] += bytes;
            }
            return;
        }
        let Some((s, e)) = bins.clip(start, end) else {
            return;
        };
        let duration = u128::from(end - start);
        let share = |t: u64| (u128::from(bytes) * u128::from(t - start) / duration) as u64;
        let copy_bytes = &mut self.copy_bytes;
        let mut done = share(s);
        let mut t = s;
        bins.split(s, e, |i, ns| {
            t += ns;
            let upto = share(t);
            copy_bytes[i] += upto - done;
            done = upto;
        });
    }

    /// The timeline; `dropped_records` is the dump's total (see [`Timeline`]).
    pub fn finish(mut self, dropped_records: Option<u64>) -> Timeline {
        let bins = self.bins;
        let mut busy_over_ns = 0;
        for d in self.devices.values_mut() {
            d.finish(&bins);
            busy_over_ns += d.late_ns;
        }
        let out = (0..bins.count())
            .map(|i| {
                let (start, end) = bins.bounds(i);
                TimelineBin {
                    start_ns: start,
                    len_ns: end - start,
                    busy_ns: self.devices.values().map(|d| d.busy_ns[i]).collect(),
                    kernels: self.kernels[i],
                    copy_bytes: self.copy_bytes[i],
                }
            })
            .collect();
        Timeline {
            from_ns: bins.from_ns,
            to_ns: bins.to_ns,
            bin_ns: bins.bin_ns,
            devices: self.devices.keys().copied().collect(),
            bins: out,
            busy_over_ns,
            dropped_records,
        }
    }
}
