//! Decoding a whole dump: every record of every chunk in buffer order, with the damage
//! rules applied (a truncated last chunk, skipped damaged bytes, a zero-filled tail,
//! garbage inside a chunk, a cut side file and a session the process never closed
//! become warnings), progress reports, and the counts a caller needs to tell the user
//! what happened.

use std::collections::{BTreeMap, HashSet};

use crate::dump::{BufferReader, Dump, DumpError, DumpWarning, Retired, META_FILE};
use crate::{ActivityKind, CuptiVersion, Record, RecordIter, TimeRange};

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
    /// Records on another clock that could not be converted (left out; see warnings).
    pub off_clock: u64,
    /// Older data removed to keep the dump's budget.
    pub retired: Retired,
    /// Frames and segments a slice did not need to read.
    pub frames_skipped: u64,
    pub segments_skipped: u64,
}

/// Call `f(chunk number, offset in chunk, record)` for every record of `dump`, in buffer
/// order, its timestamps in Unix ns: records on another clock are converted with the
/// dump's samples of that clock, or left out (counted, with a warning) when there are
/// too few. Garbage inside a chunk ends that chunk with a warning; damaged bytes between
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
/// one of those records carries; these come last. Segments and frames the time index
/// shows outside the range are not read.
pub fn walk_slice(
    dump: &Dump,
    range: &TimeRange,
    mut progress: impl FnMut(&DecodeProgress),
    mut f: impl FnMut(u64, usize, &Record),
) -> Result<DecodeReport, DumpError> {
    let meta = dump.meta();
    let mut report = empty_report(dump)?;
    if meta.session_open() {
        report.warnings.push(DumpWarning::SessionOpen {
            file: META_FILE.to_owned(),
            dropped_before: meta.dropped_records(),
        });
    }
    if nothing_written(dump, &mut report) {
        return Ok(report);
    }
    let samples = dump.clock_samples();
    let clock = samples.fit();
    let slicing = !range.is_all();
    let mut buffers = BufferReader::open(dump, slicing.then_some(*range), clock)?;
    let mut damage_seen = 0;
    let mut by_kind = [0u64; ActivityKind::SLOTS];
    let total_bytes = buffers.total_bytes();
    let mut layout = None;
    // Slices: timeless records wait for the end, when the kept correlation ids are known.
    let mut timeless: Vec<(u64, usize, Record)> = Vec::new();
    let mut kept_ids: HashSet<u32> = HashSet::new();
    while let Some(buffer) = buffers.next_buffer()? {
        let before_chunk = report.warnings.len();
        let layout = match layout {
            Some(l) => l,
            None => *layout.insert(dump.layout()?),
        };
        let mut records = RecordIter::new(buffer.data, layout);
        while let Some(item) = records.next_with_offset() {
            match item {
                Ok((offset, mut record)) => {
                    if record.has_foreign_timestamp() {
                        let Some(c) = clock else {
                            report.off_clock += 1;
                            continue;
                        };
                        record.map_timestamps(&|t| c.to_unix(t));
                        report.clock_converted += 1;
                        report.foreign_ticks_per_ns = Some(c.ticks_per_ns());
                    }
                    if slicing {
                        match record.interval() {
                            Some((start, end)) if range.overlaps(start, end) => {
                                kept_ids.insert(record.correlation_id());
                            }
                            Some(_) => continue,
                            None => {
                                timeless.push((buffer.number, offset, record));
                                continue;
                            }
                        }
                    }
                    count(&mut report, &mut by_kind, &record);
                    f(buffer.number, offset, &record);
                }
                Err(error) => {
                    let offset = error.offset();
                    report.warnings.push(DumpWarning::BadRecords {
                        file: buffer.file.to_owned(),
                        chunk: buffer.number,
                        byte: buffer.data_offset + offset as u64,
                        error,
                        skipped_bytes: (buffer.data.len() - offset) as u64,
                    });
                }
            }
        }
        report.chunks += 1;
        report.buffer_bytes += buffer.data.len() as u64;
        // Damage stepped over on the way to this chunk goes before its own warnings.
        let damage = &buffers.warnings()[damage_seen..];
        damage_seen += damage.len();
        report
            .warnings
            .splice(before_chunk..before_chunk, damage.iter().cloned());
        progress(&DecodeProgress {
            bytes_read: buffers.bytes_read(),
            total_bytes,
            chunks: report.chunks,
            records: report.records,
        });
    }
    for (number, offset, record) in timeless {
        if kept_ids.contains(&record.correlation_id()) {
            count(&mut report, &mut by_kind, &record);
            f(number, offset, &record);
        }
    }
    report
        .warnings
        .extend_from_slice(&buffers.warnings()[damage_seen..]);
    report.frames_skipped = buffers.frames_skipped;
    report.segments_skipped = buffers.segments_skipped;
    if report.off_clock > 0 {
        report.warnings.push(DumpWarning::OffClock {
            records: report.off_clock,
        });
    }
    for (number, &n) in (0u32..).zip(&by_kind) {
        if n > 0 {
            report.records_by_kind.insert(ActivityKind(number), n);
        }
    }
    Ok(report)
}

fn count(report: &mut DecodeReport, by_kind: &mut [u64], record: &Record) {
    if let Some(n) = by_kind.get_mut(record.kind().as_u32() as usize) {
        *n += 1;
    }
    report.records += 1;
}

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
    })
}

/// An empty or absent buffer file is damage, unless the writer said it wrote no chunk
/// (a CUDA program that launched nothing, or never initialised CUDA), or the process
/// died, its session open, before writing one. True when there is nothing to read.
fn nothing_written(dump: &Dump, report: &mut DecodeReport) -> bool {
    let meta = dump.meta();
    let (len, absent, file) = match dump.segments() {
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
    if len > 0 {
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
