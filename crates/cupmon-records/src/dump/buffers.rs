//! Every activity buffer of a dump, in the order it was written, from either layout:
//! PyTorch's single raw file, or cupmon's segments (frames decompressed on the way).
//! With a [`TimeRange`], segments and frames whose time index shows no overlap are not
//! read or not decompressed: the cost of a slice follows the slice, not the dump.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use super::compact::{max_section_len, ChunkDecompressor, Frame, FrameRecords, COMPACT_HEADER_LEN};
use super::dump_file::refused;
use super::frame::{FrameIndex, TimeSpan, FRAME_INDEX_LEN};
use super::seal::{seal_problem, DumpId, SEAL_LEN};
use super::segment::{SegmentFile, SEGMENTS_DIR};
use super::segment_damage::IndexSays;
use super::warning::DumpWarning;
use super::{ChunkHeader, ChunkReader, Dump, DumpError, RAW_BUFFERS_FILE};
use crate::time_range::TimeRange;
use crate::{ForeignClock, Layout};

/// One buffer: its chunk header (for a frame, `valid_size` is the frame's length) and
/// its activity records.
#[derive(Debug)]
pub struct Buffer<'a> {
    pub header: ChunkHeader,
    /// Position of the buffer in the dump, from 0 at the first live segment (across
    /// segments, those a slice skips or that were lost counted too).
    pub number: u64,
    /// The file it came from, as messages name it.
    pub file: &'a str,
    /// File offset of its chunk's data (a frame's first byte, for segments).
    pub data_offset: u64,
    /// The activity buffer's length in bytes.
    pub len: usize,
    pub body: BufferBody<'a>,
}

/// An activity buffer's records.
#[derive(Debug)]
pub enum BufferBody<'a> {
    /// Its bytes, to decode with [`crate::RecordIter`].
    Bytes(&'a [u8]),
    /// Its records straight from a frame's columns.
    Records(FrameRecords<'a>),
    /// A frame that could not be decoded (its warning is in
    /// [`BufferReader::warnings`]): no records, and not a buffer read. Returned
    /// rather than stepped over so that the frame being decoded can be lent.
    Damaged,
}

#[derive(Debug)]
struct Source {
    path: PathBuf,
    label: String,
    bytes: u64,
    /// A segment's number, and what its index line says it holds (a closed one).
    segment: Option<u32>,
    index: Option<IndexSays>,
    /// Buffers of the segments skipped just before it (their index counts): buffer
    /// numbers stay their place in the dump, whatever a slice leaves unread.
    skipped_before: u64,
}

/// Reads the buffers of a dump; see the module docs.
#[derive(Debug)]
pub struct BufferReader {
    sources: Vec<Source>,
    next_source: usize,
    current: Option<(String, ChunkReader<BufReader<File>>)>,
    /// Largest chunk a raw file / a segment may hold (a frame can be a little longer
    /// than the buffer it holds).
    max_chunk: Option<u64>,
    max_frame: Option<u64>,
    layout: Option<Layout>,
    decompressor: Option<ChunkDecompressor>,
    out: Vec<u8>,
    range: Option<TimeRange>,
    clock: Option<ForeignClock>,
    number: u64,
    bytes_before: u64,
    total_bytes: u64,
    warnings: Vec<DumpWarning>,
    /// Frames the time index let the reader skip.
    pub frames_skipped: u64,
    /// Segments the index let the reader leave closed.
    pub segments_skipped: u64,
    /// The id the segments' sealed frames must carry (`None`: a dump before the seal).
    dump_id: Option<DumpId>,
    /// The segment being read, and the records of its frames read or skipped whole.
    segment: Option<u32>,
    index: Option<IndexSays>,
    records_seen: u64,
}

impl BufferReader {
    /// The buffers of `dump` overlapping `range` (all of them for `None`); `clock`
    /// converts the index's spans of records on another clock.
    pub fn open(
        dump: &Dump,
        range: Option<TimeRange>,
        clock: Option<ForeignClock>,
    ) -> Result<Self, DumpError> {
        let mut sources = Vec::new();
        let mut segments_skipped = 0;
        let mut skipped_before = 0;
        match dump.segments() {
            Some(list) => {
                for file in &list.live {
                    if range.is_some_and(|r| !segment_may_overlap(file, &r, clock.as_ref())) {
                        segments_skipped += 1;
                        skipped_before += file.buffers_lost_before;
                        // Only a segment with a summary can be skipped.
                        skipped_before += file.summary.as_ref().map_or(0, |s| s.chunks);
                        continue;
                    }
                    skipped_before += file.buffers_lost_before;
                    let name = file.path.file_name().unwrap_or_default().to_string_lossy();
                    sources.push(Source {
                        bytes: std::fs::metadata(&file.path).map_or(0, |m| m.len()),
                        path: file.path.clone(),
                        label: format!("{SEGMENTS_DIR}/{name}"),
                        segment: Some(file.segment),
                        index: file.summary.as_ref().map(IndexSays::of),
                        skipped_before: std::mem::take(&mut skipped_before),
                    });
                }
            }
            None => sources.push(Source {
                path: dump.raw_buffers_path(),
                label: RAW_BUFFERS_FILE.to_owned(),
                bytes: std::fs::metadata(dump.raw_buffers_path()).map_or(0, |m| m.len()),
                segment: None,
                index: None,
                skipped_before: 0,
            }),
        }
        let buffer_size = dump.meta().buffer_size();
        let layout = dump.meta().cupti_version().and_then(|_| dump.layout().ok());
        Ok(Self {
            total_bytes: sources.iter().map(|s| s.bytes).sum(),
            sources,
            next_source: 0,
            current: None,
            max_chunk: buffer_size,
            max_frame: buffer_size.map(|b| {
                max_section_len(b.min(u64::from(u32::MAX)) as u32)
                    + (COMPACT_HEADER_LEN + FRAME_INDEX_LEN + SEAL_LEN) as u64
            }),
            layout,
            decompressor: None,
            out: Vec::new(),
            range,
            clock,
            number: 0,
            bytes_before: 0,
            warnings: Vec::new(),
            frames_skipped: 0,
            segments_skipped,
            dump_id: dump.segments().and_then(|l| l.dump_id),
            segment: None,
            index: None,
            records_seen: 0,
        })
    }

    /// Bytes of the files to read.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_before + self.current.as_ref().map_or(0, |(_, r)| r.bytes_read())
    }

    /// Damage stepped over so far, in file order.
    pub fn warnings(&self) -> &[DumpWarning] {
        &self.warnings
    }

    /// The next buffer overlapping the range (maybe [`BufferBody::Damaged`]); `None`
    /// at the end.
    pub fn next_buffer(&mut self) -> Result<Option<Buffer<'_>>, DumpError> {
        loop {
            if self.current.is_none() && !self.open_next()? {
                return Ok(None);
            }
            let (label, reader) = self.current.as_mut().expect("opened above");
            let chunk = match reader.next_chunk() {
                Ok(Some(chunk)) => chunk,
                Ok(None) => {
                    self.warnings.extend_from_slice(reader.warnings());
                    self.bytes_before += reader.bytes_read();
                    let label = std::mem::take(label);
                    self.current = None;
                    // A closed segment read to its end: what its index line says it
                    // held and could not be read is lost.
                    if let Some(index) = self.index.take() {
                        if index.records != self.records_seen {
                            self.warnings.push(DumpWarning::SegmentShort {
                                file: label,
                                index,
                                read: self.records_seen,
                            });
                        }
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            let number = self.number;
            self.number += 1;
            let (header, data_offset) = (chunk.header, chunk.data_offset());
            if !header.frame {
                // A raw chunk is its buffer: lend the reader's bytes (no copy of 4 MiB).
                let (label, reader) = self.current.as_ref().expect("still open");
                let data = reader.last_data();
                return Ok(Some(Buffer {
                    header,
                    number,
                    file: label,
                    data_offset,
                    len: data.len(),
                    body: BufferBody::Bytes(data),
                }));
            }
            let body_at = header.frame_body_at();
            let index = FrameIndex::parse(chunk.data).filter(|_| chunk.data.len() >= body_at);
            let Some(index) = index else {
                self.warnings.push(DumpWarning::BadFrame {
                    file: label.clone(),
                    byte: data_offset,
                    problem: "shorter than its time index".to_owned(),
                });
                continue;
            };
            if let Some(problem) = seal_problem(&header, chunk.data, self.dump_id, self.segment) {
                self.warnings.push(DumpWarning::FrameRejected {
                    file: label.clone(),
                    byte: data_offset,
                    problem,
                });
                continue;
            }
            if let Some(range) = &self.range {
                if !frame_may_overlap(&index, range, self.clock.as_ref()) {
                    self.frames_skipped += 1;
                    self.records_seen += u64::from(index.records);
                    continue;
                }
            }
            let Some(layout) = self.layout else {
                return Err(DumpError::meta(
                    super::META_FILE,
                    "no usable cupti_version key: cannot decompress the segments' frames",
                ));
            };
            let d = self
                .decompressor
                .get_or_insert_with(|| ChunkDecompressor::new(layout));
            let max = self.max_chunk.map_or(usize::MAX, |m| m as usize);
            // The frame is decoded from the reader's bytes, which the next chunk
            // replaces: read them again through the reader, whose borrow ends here.
            let (label, reader) = self.current.as_ref().expect("still open");
            let data = &reader.last_data()[body_at..];
            let decoded = d.frame(data, max, &mut self.out);
            if decoded.is_ok() {
                self.records_seen += u64::from(index.records);
            }
            let (len, body) = match decoded {
                Ok(Frame::Bytes(bytes)) => (bytes.len(), BufferBody::Bytes(bytes)),
                Ok(Frame::Records(records)) => (records.len(), BufferBody::Records(records)),
                Err(e) => {
                    self.warnings.push(DumpWarning::BadFrame {
                        file: label.clone(),
                        byte: data_offset,
                        problem: e.to_string(),
                    });
                    (0, BufferBody::Damaged)
                }
            };
            return Ok(Some(Buffer {
                header,
                number,
                file: label,
                data_offset,
                len,
                body,
            }));
        }
    }

    fn open_next(&mut self) -> Result<bool, DumpError> {
        let (source, file, len) = loop {
            let Some(source) = self.sources.get(self.next_source) else {
                return Ok(false);
            };
            self.next_source += 1;
            self.number += source.skipped_before;
            // By the rule every dump file is read by: a FIFO or a link to /dev/zero in
            // place of a buffer file is damage (its records lost), not a hang.
            match cupmon_files::open_regular(&source.path) {
                Ok((file, len)) => break (source, file, len),
                Err(cupmon_files::FileError::Io { source: e, .. }) => {
                    return Err(DumpError::io(&source.label, e))
                }
                Err(e) => self.warnings.push(refused(
                    &source.label,
                    &e,
                    "the activity records it holds are missing from the output",
                )),
            }
        };
        self.segment = source.segment;
        self.index = source.index;
        self.records_seen = 0;
        let raw = source.label == RAW_BUFFERS_FILE;
        let reader = ChunkReader::new(
            BufReader::with_capacity(read_buffer_size(raw), file),
            source.label.clone(),
            Some(len),
        )
        .with_max_chunk_size(if raw { self.max_chunk } else { self.max_frame });
        let reader = if raw { reader } else { reader.with_frames() };
        self.current = Some((source.label.clone(), reader));
        Ok(true)
    }
}

/// Whether a span (native, or foreign converted by `clock`) may overlap `range`.
fn spans_may_overlap(
    native: TimeSpan,
    foreign: TimeSpan,
    range: &TimeRange,
    clock: Option<&ForeignClock>,
) -> bool {
    if let Some((first, last)) = native.get() {
        if range.overlaps(first, last) {
            return true;
        }
    }
    match (foreign.get(), clock) {
        (Some((first, last)), Some(c)) => range.overlaps(c.to_unix(first), c.to_unix(last)),
        // Records on a clock that cannot be converted are left out by the walk anyway.
        _ => false,
    }
}

fn frame_may_overlap(index: &FrameIndex, range: &TimeRange, clock: Option<&ForeignClock>) -> bool {
    // A frame written without its index (records 0 but data) must be read.
    if index.records == 0 {
        return true;
    }
    spans_may_overlap(index.native, index.foreign, range, clock)
}

fn segment_may_overlap(
    file: &SegmentFile,
    range: &TimeRange,
    clock: Option<&ForeignClock>,
) -> bool {
    let Some(s) = &file.summary else {
        return true;
    };
    let span = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(first), Some(last)) => TimeSpan { first, last },
        _ => TimeSpan::EMPTY,
    };
    spans_may_overlap(
        span(s.first_ns, s.last_ns),
        span(s.foreign_first, s.foreign_last),
        range,
        clock,
    )
}

/// The read buffer of a dump file. Raw chunks are whole CUPTI buffers (4 MiB by
/// default), which a buffered reader copies twice for the part it had read ahead with
/// the header: a small buffer keeps that part small (the rest is read straight into
/// the chunk). Segments' frames are small, and many fit in a large buffer.
pub(crate) fn read_buffer_size(raw_chunks: bool) -> usize {
    if raw_chunks {
        64 << 10
    } else {
        1 << 20
    }
}
