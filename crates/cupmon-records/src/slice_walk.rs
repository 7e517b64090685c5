//! A walk of a dump, or of a time slice of it, one buffer at a time: what
//! [`crate::walk_slice`] and the streamed decodes stand on.
//!
//! A slice keeps the records whose interval overlaps it, plus the records without a
//! time of their own (external correlations) that share a correlation id with one of
//! those. Which ones those are can be known only once the records they join with have
//! been read, and those may come later in the dump. So a slice walks the dump twice
//! side by side: a lead walk runs ahead by [`Reorder::window_ns`] of buffer completion
//! time and notes the correlation ids of the kept records ([`JoinWindow`]); the walk
//! that gives the records looks each timeless one up there. A timeless record and its
//! timed partner in buffers completed more than the window apart are not joined (the
//! timeless record is left out of the slice). Memory: one buffer per walk and the ids
//! of a window's kept records, whatever the dump's and the slice's length.

use crate::join_window::{JoinWindow, Reorder};
use crate::walk::{DecodeProgress, DecodeReport, RecordWalk, Walked, WalkedRef};
use crate::{Dump, DumpError, TimeRange};

/// See the module docs.
#[derive(Debug)]
pub struct SliceWalk<'d> {
    range: TimeRange,
    reorder: Reorder,
    trail: RecordWalk<'d>,
    /// Slices only.
    lead: Option<RecordWalk<'d>>,
    kept: JoinWindow<()>,
    /// Timeless records left out after `kept` had dropped ids early: those that
    /// may have lost their partner to the full window (ids dropped while no
    /// timeless record looks for them cost nothing).
    missed_after_eviction: u64,
}

impl<'d> SliceWalk<'d> {
    /// The records of `dump` in `range` (all of them when both ends are open).
    pub fn open(dump: &'d Dump, range: &TimeRange, reorder: Reorder) -> Result<Self, DumpError> {
        let lead = if range.is_all() {
            None
        } else {
            Some(RecordWalk::open(dump, range)?)
        };
        let mut trail = RecordWalk::open(dump, range)?;
        trail.count_all = lead.is_none();
        Ok(Self {
            range: *range,
            reorder,
            trail,
            lead,
            kept: JoinWindow::new(reorder),
            missed_after_eviction: 0,
        })
    }

    /// The records of the next buffer that the slice keeps, in buffer order (maybe
    /// none); `None` after the last buffer.
    pub fn next_buffer(&mut self) -> Result<Option<&[Walked]>, DumpError> {
        if !self.trail.read_buffer()? {
            return Ok(None);
        }
        if let Some(lead) = &mut self.lead {
            let ahead = self.trail.stamp().saturating_add(self.reorder.window_ns);
            while lead.report.chunks < self.trail.report.chunks
                || (!lead.done() && lead.stamp() <= ahead)
            {
                if !lead.read_buffer()? {
                    break;
                }
                for w in &lead.records {
                    if let Some((start, end)) = w.record.interval() {
                        if self.range.overlaps(start, end) {
                            self.kept.insert(w.record.correlation_id(), w.stamp, ());
                        }
                    }
                }
            }
            let (range, kept) = (&self.range, &self.kept);
            let missed = &mut self.missed_after_eviction;
            self.trail.records.retain(|w| match w.record.interval() {
                Some((start, end)) => range.overlaps(start, end),
                None => {
                    let found = kept
                        .find(w.record.correlation_id(), w.stamp, |_| true)
                        .is_some();
                    *missed += u64::from(!found && kept.evicted_early() > 0);
                    found
                }
            });
            self.kept.expire(self.trail.stamp());
            let records = std::mem::take(&mut self.trail.records);
            for w in &records {
                self.trail.count(&w.record);
            }
            self.trail.records = records;
        }
        Ok(Some(&self.trail.records))
    }

    /// Read no more than the first `buffers` buffers (what an earlier walk of a dump
    /// that is still being written saw).
    pub fn with_limit(mut self, buffers: u64) -> Self {
        self.trail.limit = Some(buffers);
        if let Some(lead) = &mut self.lead {
            lead.limit = Some(buffers);
        }
        self
    }

    /// [`SliceWalk::next_buffer`], handing the records to `f` one by one (in the
    /// whole-dump case without holding the buffer's records); false at the end.
    pub fn next_buffer_with(
        &mut self,
        mut f: impl FnMut(&WalkedRef<'_>),
    ) -> Result<bool, DumpError> {
        if self.lead.is_none() {
            return self.trail.read_buffer_with(&mut f);
        }
        match self.next_buffer()? {
            Some(records) => {
                records.iter().for_each(|w| f(&w.as_ref()));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The records [`SliceWalk::next_buffer`] gave last.
    pub fn records(&self) -> &[Walked] {
        &self.trail.records
    }

    /// The records of the buffer read last that are on a clock the walk cannot
    /// convert: kept apart, as CUPTI wrote them ([`crate::clock::OFF_CLOCK_RULE`]).
    /// A slice cannot place them in its range: it gives those of the buffers it reads.
    pub fn off_clock_records(&self) -> &[Walked] {
        &self.trail.off_clock_records
    }

    /// The stamp of the buffer read last.
    pub fn stamp(&self) -> u64 {
        self.trail.stamp()
    }

    /// Buffers read so far.
    pub fn buffers_read(&self) -> u64 {
        self.trail.report.chunks
    }

    /// Whether the last buffer has been read.
    pub fn done(&self) -> bool {
        self.trail.done()
    }

    pub fn progress(&self) -> DecodeProgress {
        self.trail.progress()
    }

    /// The report: counts of the records given, warnings, what the index skipped.
    pub fn finish(self) -> DecodeReport {
        let mut report = self.trail.finish();
        report.joins_evicted += self.missed_after_eviction;
        report
    }
}
