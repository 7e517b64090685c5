//! Decoding a whole dump: every record of every chunk in buffer order, with the damage
//! rules applied (a truncated last chunk, skipped damaged bytes, a zero-filled tail,
//! garbage inside a chunk, a cut side file and a session the process never closed
//! become warnings), progress reports, and the counts a caller needs to tell the user
//! what happened.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::dump::{BufferBody, BufferReader, Dump, DumpError, DumpWarning, Retired, META_FILE};
use crate::{
    ActivityKind, CuptiVersion, ForeignClock, Layout, Record, RecordIter, Reorder, SliceWalk,
    TimeRange,
};

/// Where a long decode is, for progress bars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeProgress {
    /// Bytes of the buffer files (raw file or segments to read) consumed so far.
    pub bytes_read: u64,
    /// Its total size.
    pub total_bytes: u64,
    pub chunks: u64,
    pub records: u64,
}

/// What a decode read and what it had to skip.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeReport {
    pub cupti_version: CuptiVersion,
    /// Complete chunks read.
    pub chunks: u64,
    /// Activity-buffer bytes in those chunks.
    pub buffer_bytes: u64,
    pub records: u64,
    pub records_by_kind: BTreeMap<ActivityKind, u64>,
    /// Problems that did not stop the decode: print them; the output is incomplete.
    pub warnings: Vec<DumpWarning>,
    /// Records CUPTI dropped, as the meta says; `None` when it cannot say (see
    /// `dropped_records_note`).
    pub dropped_records: Option<u64>,
    /// Why `dropped_records` is unknown: the meta lacks the count, or the process ended
    /// without closing its dump.
    pub dropped_records_note: Option<String>,
    /// Kernel records whose name pointer was not in `kernel_names.tsv`.
    pub unresolved_kernel_names: u64,
    /// Records on another clock (a client's timestamp callback), converted to Unix ns.
    pub clock_converted: u64,
    /// The other clock's rate, when records were converted (2.1 for a 2.1 GHz counter).
    pub foreign_ticks_per_ns: Option<f64>,
    /// Records on another clock that could not be converted: kept apart, on their
    /// own clock ([`crate::clock::OFF_CLOCK_RULE`]), not among `records`.
    pub off_clock: u64,
    /// Older data removed to keep the dump's budget.
    pub retired: Retired,
    /// Frames and segments a slice did not need to read.
    pub frames_skipped: u64,
    pub segments_skipped: u64,
    /// Segments whose stored digest stood for their records ([`crate::digest`]).
    pub segments_digested: u64,
    /// Segments whose stored digest lacks some of their records (the writer skipped
    /// it while it was behind CUPTI), so their records were read instead.
    pub segments_digest_partial: u64,
    /// Joins a streamed walk may have missed because its window was full
    /// ([`Reorder::max_pending`]): a slice's external correlations left unmatched
    /// after the window let ids go early, a decode's entries dropped before their
    /// time. Some records may lack what they join with.
    pub joins_evicted: u64,
}

/// One record as a walk gives it.
#[derive(Debug, Clone)]
pub struct Walked {
    /// Its buffer's position in the dump, from 0 at the first live segment (across
    /// segments, those a slice skips counted too).
    pub number: u64,
    /// Its byte offset in the buffer.
    pub offset: usize,
    /// Its buffer's stamp: when CUPTI completed the buffer (see [`crate::JoinWindow`]).
    pub stamp: u64,
    /// Timestamps in Unix ns.
    pub record: Record,
}

/// [`Walked`] with the record lent: what a walk hands to a callback, the record
/// maybe decoded in place of the one before it.
#[derive(Debug, Clone, Copy)]
pub struct WalkedRef<'a> {
    pub number: u64,
    pub offset: usize,
    pub stamp: u64,
    pub record: &'a Record,
}

impl Walked {
    /// This record, lent.
    pub fn as_ref(&self) -> WalkedRef<'_> {
        WalkedRef {
            number: self.number,
            offset: self.offset,
            stamp: self.stamp,
            record: &self.record,
        }
    }
}

/// Call `f(chunk number, offset in chunk, record)` for every record of `dump`, in buffer
/// order, its timestamps in Unix ns: records on another clock are converted with the
/// dump's samples of that clock, or, when there are too few, kept apart (counted, with
/// a warning; [`crate::SliceWalk::off_clock_records`] gives them) and not given to `f`. Garbage inside a chunk ends that chunk with a warning; damaged bytes between
/// chunks are skipped with a warning, a truncated last chunk or a zero-filled tail ends
/// the walk with one; what [`crate::ChunkReader`] cannot step over is an error. A dump
/// whose process was killed before its first buffer was written (session still open,
/// no chunk counted, the raw file empty or absent) is empty, with a warning.
pub fn walk_records(
    dump: &Dump,
    progress: impl FnMut(&DecodeProgress),
    f: impl FnMut(u64, usize, &Record),
) -> Result<DecodeReport, DumpError> {
    walk_slice(dump, &TimeRange::default(), progress, f)
}

/// [`walk_records`] for the records whose time interval overlaps `range`, plus the
/// records without a time of their own (external correlations) whose correlation id
/// one of those records carries, in buffer order ([`crate::SliceWalk`] says how far
/// apart the two may lie). Segments and frames the time index shows outside the range
/// are not read. One buffer at a time: memory does not grow with the dump.
pub fn walk_slice(
    dump: &Dump,
    range: &TimeRange,
    progress: impl FnMut(&DecodeProgress),
    f: impl FnMut(u64, usize, &Record),
) -> Result<DecodeReport, DumpError> {
    walk_slice_apart(dump, range, progress, f, |_| {})
}

/// [`walk_slice`], handing the records kept apart on their own clock
/// ([`crate::clock::OFF_CLOCK_RULE`]) to `off_clock`, after the other records of
/// their buffer.
pub fn walk_slice_apart(
    dump: &Dump,
    range: &TimeRange,
    mut progress: impl FnMut(&DecodeProgress),
    mut f: impl FnMut(u64, usize, &Record),
    mut off_clock: impl FnMut(&Walked),
) -> Result<DecodeReport, DumpError> {
    let mut walk = SliceWalk::open(dump, range, Reorder::default())?;
    while walk.next_buffer_with(|w| f(w.number, w.offset, w.record))? {
        walk.off_clock_records().iter().for_each(&mut off_clock);
        progress(&walk.progress());
    }
    Ok(walk.finish())
}

/// Every buffer of a dump in order, one at a time, its records decoded and on the
/// session's clock (none left out for a range: [`SliceWalk`] does that; the range only
/// lets the time index skip segments and frames). What [`walk_records`] stands on.
#[derive(Debug)]
pub(crate) struct RecordWalk<'d> {
    dump: &'d Dump,
    buffers: Option<BufferReader>,
    clock: Option<ForeignClock>,
    layout: Option<Layout>,
    pub report: DecodeReport,
    by_kind: [u64; ActivityKind::SLOTS],
    damage_seen: usize,
    stamp: u64,
    done: bool,
    /// Read at most this many buffers.
    pub limit: Option<u64>,
    /// Count every record read as given (a walk that keeps them all).
    pub count_all: bool,
    /// The records of the buffer read last.
    pub records: Vec<Walked>,
    /// The records of the buffer read last that are on a clock the walk cannot
    /// convert, their timestamps as CUPTI wrote them ([`crate::clock::OFF_CLOCK_RULE`]).
    pub off_clock_records: Vec<Walked>,
}

impl<'d> RecordWalk<'d> {
    pub fn open(dump: &'d Dump, range: &TimeRange) -> Result<Self, DumpError> {
        let meta = dump.meta();
        let mut report = empty_report(dump)?;
        // Where the meta's last update failed, that warning says why the session reads
        // as open (not that the process was killed).
        if meta.session_open() && !dump.meta_not_updated() {
            report.warnings.push(DumpWarning::SessionOpen {
                file: META_FILE.to_owned(),
                dropped_before: meta.dropped_records(),
            });
        }
        let clock = dump.clock_samples().fit();
        let buffers = if nothing_written(dump, &mut report) {
            None
        } else {
            let slicing = !range.is_all();
            Some(BufferReader::open(dump, slicing.then_some(*range), clock)?)
        };
        Ok(Self {
            dump,
            buffers,
            clock,
            layout: None,
            report,
            by_kind: [0; ActivityKind::SLOTS],
            damage_seen: 0,
            stamp: 0,
            done: false,
            limit: None,
            count_all: false,
            records: Vec::new(),
            off_clock_records: Vec::new(),
        })
    }

    /// Read the next buffer into `records`; false at the end.
    pub fn read_buffer(&mut self) -> Result<bool, DumpError> {
        self.read(None)
    }

    /// Read the next buffer, handing each record to `f` (not kept in `records`).
    pub fn read_buffer_with(
        &mut self,
        f: &mut dyn FnMut(&WalkedRef<'_>),
    ) -> Result<bool, DumpError> {
        self.read(Some(f))
    }

    fn read(
        &mut self,
        mut direct: Option<&mut dyn FnMut(&WalkedRef<'_>)>,
    ) -> Result<bool, DumpError> {
        self.records.clear();
        self.off_clock_records.clear();
        if self.done || self.limit.is_some_and(|n| self.report.chunks >= n) {
            self.done = true;
            return Ok(false);
        }
        let Some(buffers) = self.buffers.as_mut() else {
            self.done = true;
            return Ok(false);
        };
        let buffer = loop {
            match buffers.next_buffer()? {
                None => {
                    self.done = true;
                    return Ok(false);
                }
                // Its warning is among the buffers' damage, which the next chunk takes.
                Some(b) if matches!(b.body, BufferBody::Damaged) => continue,
                Some(b) => break b,
            }
        };
        let report = &mut self.report;
        let before_chunk = report.warnings.len();
        let layout = match self.layout {
            Some(l) => l,
            None => *self.layout.insert(self.dump.layout()?),
        };
        let completed = buffer.header.completion.unix_completed_ns;
        // Known now unless the header lacks it (then set once the records are read).
        let stamp = self.stamp.max(completed);
        let mut latest_end = 0;
        let (number, len) = (buffer.number, buffer.len);
        let (clock, count_all) = (self.clock, self.count_all);
        let (by_kind, kept) = (&mut self.by_kind, &mut self.records);
        let off_clock = &mut self.off_clock_records;
        // Records decoded from bytes come owned, those of a frame's columns lent (each
        // is its template's, set anew for the next record): a lent one is copied only
        // to be converted or kept.
        let mut take = |offset: usize, mut record: Cow<'_, Record>| {
            if record.has_foreign_timestamp() {
                let Some(c) = clock else {
                    // Kept apart, as written: no output may show it on the session's clock.
                    report.off_clock += 1;
                    off_clock.push(Walked {
                        number,
                        offset,
                        stamp,
                        record: record.into_owned(),
                    });
                    return;
                };
                record.to_mut().map_timestamps(&|t| c.to_unix(t));
                report.clock_converted += 1;
                report.foreign_ticks_per_ns = Some(c.ticks_per_ns());
            }
            if completed == 0 {
                if let Some((start, end)) = record.interval() {
                    latest_end = latest_end.max(end.max(start));
                }
            }
            if count_all {
                if let Some(n) = by_kind.get_mut(record.kind().as_u32() as usize) {
                    *n += 1;
                }
                report.records += 1;
            }
            match &mut direct {
                // Straight on while it is in cache, when the stamp is known.
                Some(f) if completed > 0 => f(&WalkedRef {
                    number,
                    offset,
                    stamp,
                    record: &record,
                }),
                _ => kept.push(Walked {
                    number,
                    offset,
                    stamp,
                    record: record.into_owned(),
                }),
            }
        };
        let warning = match buffer.body {
            BufferBody::Bytes(data) => {
                let mut records = RecordIter::new(data, layout);
                let mut bad = None;
                while let Some(item) = records.next_with_offset() {
                    match item {
                        Ok((offset, record)) => take(offset, Cow::Owned(record)),
                        Err(e) => bad = Some(e),
                    }
                }
                bad.map(|error| DumpWarning::BadRecords {
                    file: buffer.file.to_owned(),
                    chunk: number,
                    byte: buffer.data_offset + error.offset() as u64,
                    skipped_bytes: (len - error.offset()) as u64,
                    error,
                })
            }
            // The frame was checked before its first record was given: an error here
            // is a check missing there.
            BufferBody::Records(frame) => frame
                .each(|offset, r| take(offset, Cow::Borrowed(r)))
                .err()
                .map(|e| DumpWarning::BadFrame {
                    file: buffer.file.to_owned(),
                    byte: buffer.data_offset,
                    problem: format!("{e}, after the records before it were read"),
                }),
            BufferBody::Damaged => None,
        };
        let report = &mut self.report;
        report.warnings.extend(warning);
        self.stamp = stamp;
        if completed == 0 {
            // A header without the completion time: the buffer's latest record instead.
            self.stamp = self.stamp.max(latest_end);
            for w in self.records.iter_mut().chain(&mut self.off_clock_records) {
                w.stamp = self.stamp;
            }
            if let Some(f) = direct {
                self.records.iter().for_each(|w| f(&w.as_ref()));
                self.records.clear();
            }
        }
        report.chunks += 1;
        report.buffer_bytes += len as u64;
        // Damage stepped over on the way to this chunk goes before its own warnings.
        let damage = &buffers.warnings()[self.damage_seen..];
        self.damage_seen += damage.len();
        report
            .warnings
            .splice(before_chunk..before_chunk, damage.iter().cloned());
        Ok(true)
    }

    /// The stamp of the buffer read last (0 before the first).
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Whether the last buffer has been read.
    pub fn done(&self) -> bool {
        self.done
    }

    /// Count `record` as one the walk gives.
    pub fn count(&mut self, record: &Record) {
        if let Some(n) = self.by_kind.get_mut(record.kind().as_u32() as usize) {
            *n += 1;
        }
        self.report.records += 1;
    }

    pub fn progress(&self) -> DecodeProgress {
        DecodeProgress {
            bytes_read: self.buffers.as_ref().map_or(0, BufferReader::bytes_read),
            total_bytes: self.buffers.as_ref().map_or(0, BufferReader::total_bytes),
            chunks: self.report.chunks,
            records: self.report.records,
        }
    }

    /// The report of the walk.
    pub fn finish(self) -> DecodeReport {
        let mut report = self.report;
        if let Some(buffers) = &self.buffers {
            report
                .warnings
                .extend_from_slice(&buffers.warnings()[self.damage_seen..]);
            report.frames_skipped = buffers.frames_skipped;
            report.segments_skipped = buffers.segments_skipped;
        }
        if report.off_clock > 0 {
            report.warnings.push(DumpWarning::OffClock {
                records: report.off_clock,
            });
        }
        for (number, &n) in (0u32..).zip(&self.by_kind) {
            if n > 0 {
                report.records_by_kind.insert(ActivityKind(number), n);
            }
        }
        report
    }
}

/// Why a dump whose meta's last update failed cannot say how many records were dropped.
pub const META_NOT_UPDATED: &str = "the process's last update of the meta was not written \
                                    (see the warning): records dropped after the update \
                                    before it are unknown";

/// The report before any chunk is read: what the meta says.
fn empty_report(dump: &Dump) -> Result<DecodeReport, DumpError> {
    // A dump of a process that never used CUDA has no chunks and may not name
    // a CUPTI version: the layout is only needed once there is a chunk.
    let layout = dump
        .meta()
        .cupti_version()
        .map(|_| dump.layout())
        .transpose()?;
    let (dropped_records, dropped_records_note) = match dump.meta().final_dropped_records() {
        Ok(n) => (Some(n), None),
        Err(_) if dump.meta_not_updated() => (None, Some(META_NOT_UPDATED.to_owned())),
        Err(why) => (None, Some(why)),
    };
    Ok(DecodeReport {
        cupti_version: layout.map_or(CuptiVersion::from_api(0), |l| l.version()),
        chunks: 0,
        buffer_bytes: 0,
        records: 0,
        records_by_kind: BTreeMap::new(),
        warnings: dump.warnings().to_vec(),
        dropped_records,
        dropped_records_note,
        unresolved_kernel_names: 0,
        clock_converted: 0,
        foreign_ticks_per_ns: None,
        off_clock: 0,
        retired: dump.retired(),
        frames_skipped: 0,
        segments_skipped: 0,
        segments_digested: 0,
        segments_digest_partial: 0,
        joins_evicted: 0,
    })
}

/// Whether a live segment is not a regular file (a FIFO, a link to `/dev/zero`): its
/// size says nothing, and reading it says what it is (damage, not an empty dump).
fn has_irregular_segment(dump: &Dump) -> bool {
    dump.segments().is_some_and(|list| {
        list.live
            .iter()
            .any(|f| !std::fs::symlink_metadata(&f.path).is_ok_and(|m| m.is_file()))
    })
}

/// An empty or absent buffer file is damage, unless the writer said it wrote no chunk
/// (a CUDA program that launched nothing, or never initialised CUDA), or the process
/// died, its session open, before writing one. True when there is nothing to read.
fn nothing_written(dump: &Dump, report: &mut DecodeReport) -> bool {
    let meta = dump.meta();
    let (len, absent, file) = match dump.segments() {
        // A closed segment is read even when empty: its index line says what it lost.
        Some(list) if list.live.iter().any(|f| f.summary.is_some()) => return false,
        // The folder is there (the dump has segments), maybe still without a file.
        Some(_) => (dump.buffer_file_bytes(), false, crate::dump::SEGMENTS_DIR),
        None => {
            let len = std::fs::metadata(dump.raw_buffers_path()).map_or(None, |m| Some(m.len()));
            (
                len.unwrap_or(0),
                len.is_none(),
                crate::dump::RAW_BUFFERS_FILE,
            )
        }
    };
    if len > 0 || has_irregular_segment(dump) {
        return false;
    }
    if meta.session_open() && meta.chunks_written().unwrap_or(0) == 0 {
        report.warnings.push(DumpWarning::NothingWritten {
            file: file.to_owned(),
            absent,
        });
        return true;
    }
    // Segments: everything written may have been retired, or nothing was.
    !meta.session_open() && (meta.chunks_written() == Some(0) || dump.segments().is_some())
}
