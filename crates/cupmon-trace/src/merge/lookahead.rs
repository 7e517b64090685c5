//! The joins of a trace streamed from a dump, made a bounded distance ahead.
//!
//! A merge of a window in memory looks things up over the whole window: the CPU op
//! (CUSTOM0 external correlation) of an API call or a kernel, the annotation (CUSTOM1)
//! a kernel was launched under, a GPU op's overlap lane (its stream's ops sorted by
//! start). Streamed from a dump, a second walk runs ahead of the one that writes, by
//! the reorder window of buffer completion time ([`cupmon_records::JoinWindow`]): it
//! holds the external correlations of the buffers within the window on either side,
//! and places GPU ops on lanes (`lanes.rs`) as soon as no earlier-starting op can
//! still come. A join whose two records lie in buffers completed more than the window
//! apart is not made: the event is written without its `External id` and outside its
//! annotation's span.

use cupmon_records::{Dump, JoinWindow, Record, Reorder, SliceWalk, TimeRange, Walked};

use super::entries::USER_ANNOTATION_KIND;
use super::lanes::LaneAssigner;
use crate::TraceError;

/// CUPTI's CUSTOM0 external correlation: Kineto's CPU ops.
const CPU_OP_KIND: i128 = 3;

/// What a lookahead does with GPU ops' overlap lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lanes {
    /// Nothing (PyTorch's output exactly has no overlap tracks).
    Off,
    /// The tracks they need, for the metadata (a first pass).
    Tracks,
    /// Each op's lane, for [`Lookahead::lane`].
    Each,
}

/// See the module docs.
#[derive(Debug)]
pub(crate) struct Lookahead<'d> {
    walk: SliceWalk<'d>,
    reorder: Reorder,
    /// Correlation id -> (external kind, external id) of CUSTOM0 and CUSTOM1 records.
    joins: JoinWindow<(u32, u64)>,
    pub lanes: LaneAssigner,
    lanes_on: bool,
    joins_on: bool,
    /// Index of the next event the walk gives.
    next_index: usize,
    done: bool,
}

impl<'d> Lookahead<'d> {
    /// `lanes`: what to do with overlap lanes; `joins`: whether to hold external
    /// correlations for [`Lookahead::cpu_op`] and [`Lookahead::annotation`].
    pub fn open(
        dump: &'d Dump,
        range: &TimeRange,
        reorder: Reorder,
        limit: Option<u64>,
        lanes: Lanes,
        joins: bool,
    ) -> Result<Self, TraceError> {
        let walk = SliceWalk::open(dump, range, reorder)?;
        Ok(Self {
            walk: match limit {
                Some(n) => walk.with_limit(n),
                None => walk,
            },
            reorder,
            joins: JoinWindow::new(reorder),
            lanes: LaneAssigner::new(reorder, lanes == Lanes::Each),
            lanes_on: lanes != Lanes::Off,
            joins_on: joins,
            next_index: 0,
            done: false,
        })
    }

    /// Read the next buffer, noting its joins and lanes, then hand its records to
    /// `each`; false at the end (every lane is then placed).
    pub fn read_buffer(&mut self, mut each: impl FnMut(&Walked)) -> Result<bool, TraceError> {
        if self.done {
            return Ok(false);
        }
        if self.walk.next_buffer()?.is_none() {
            self.done = true;
            self.lanes.release_all();
            return Ok(false);
        }
        for w in self.walk.records() {
            let gpu: Option<(u32, u32, u64, u64)> = match &w.record {
                Record::ExternalCorrelation(x) if x.correlation_id != 0 && self.joins_on => {
                    let kind = i128::from(x.external_kind);
                    if kind == CPU_OP_KIND || kind == USER_ANNOTATION_KIND {
                        let value = (x.external_kind, x.external_id);
                        self.joins.insert(x.correlation_id, w.stamp, value);
                    }
                    None
                }
                Record::Kernel(k) => Some((k.device_id, k.stream_id, k.start, k.end)),
                Record::Memcpy(m) => Some((m.device_id, m.stream_id, m.start, m.end)),
                Record::Memset(m) => Some((m.device_id, m.stream_id, m.start, m.end)),
                _ => None,
            };
            // An op without a time (start 0) is left out of the trace (`untimed.rs`).
            let gpu = gpu.filter(|&(_, _, start, _)| self.lanes_on && start != 0);
            if let Some((device, stream, start, end)) = gpu {
                let (start, end) = (i128::from(start), i128::from(end));
                self.lanes
                    .push(device.into(), stream.into(), start, end, self.next_index);
            }
            self.next_index += 1;
            each(w);
        }
        self.lanes.release_before(self.walk.stamp());
        Ok(true)
    }

    /// Read until the walk holds every record that a record of buffer `buffers`
    /// stamped `stamp` can join (and at least that buffer).
    pub fn advance(&mut self, buffers: u64, stamp: u64) -> Result<(), TraceError> {
        let ahead = stamp.saturating_add(self.reorder.window_ns);
        while self.walk.buffers_read() < buffers || (!self.done && self.walk.stamp() <= ahead) {
            if !self.read_buffer(|_| {})? {
                break;
            }
        }
        Ok(())
    }

    /// Forget what no record stamped `stamp` or later can join.
    pub fn expire(&mut self, stamp: u64) {
        self.joins.expire(stamp);
    }

    /// The overlap lane of GPU event `index`, reading on until it is placed.
    pub fn lane(&mut self, index: usize) -> Result<i128, TraceError> {
        loop {
            if let Some(lane) = self.lanes.take(index) {
                return Ok(lane);
            }
            if !self.read_buffer(|_| {})? {
                // Every op read is placed by now: not a GPU op of this walk.
                return Ok(self.lanes.take(index).unwrap_or(0));
            }
        }
    }

    /// The CPU op (CUSTOM0 external id) of correlation id `id` for a record stamped
    /// `stamp`, and its annotation (the CUSTOM1 external id, one `named` accepts; only
    /// if `annotations`), each the latest within the window, as a map over the whole
    /// window would give.
    pub fn joined(
        &self,
        id: i128,
        stamp: u64,
        annotations: bool,
        named: impl Fn(i128) -> bool,
    ) -> (Option<i128>, Option<i128>) {
        let Some(id) = u32::try_from(id).ok().filter(|&id| id != 0) else {
            return (None, None);
        };
        let (mut cpu_op, mut annotation) = (None, None);
        for &(kind, ext) in self.joins.within(id, stamp) {
            let (kind, ext) = (i128::from(kind), i128::from(ext));
            if kind == CPU_OP_KIND && cpu_op.is_none() {
                cpu_op = Some(ext);
            } else if kind == USER_ANNOTATION_KIND
                && annotations
                && annotation.is_none()
                && named(ext)
            {
                annotation = Some(ext);
            }
        }
        (cpu_op, annotation)
    }

    /// Join entries dropped early because the window was full.
    pub fn evicted_early(&self) -> u64 {
        self.joins.evicted_early()
    }

    /// The records of the buffer read last that are on their own clock
    /// (`off_clock.rs`).
    pub fn off_clock_records(&self) -> &[Walked] {
        self.walk.off_clock_records()
    }

    pub fn progress(&self) -> cupmon_records::DecodeProgress {
        self.walk.progress()
    }

    pub fn finish(self) -> cupmon_records::DecodeReport {
        self.walk.finish()
    }
}
