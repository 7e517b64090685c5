//! The time span of a dump's records (first start, last end on the Unix clock),
//! without decoding it: closed segments from `index.jsonl`, the active (or unclosed)
//! segment from its frames' time indexes (chunk headers and the 40-byte index prefix
//! read, the rest seeked over). `--from +12.5`, `HH:MM:SS` and `--last 30s` need it,
//! and the cost must not follow the dump's length.
//!
//! What needs more: a frame whose index counts no records (written without one) is
//! decompressed and its records indexed; damage in an unclosed segment hands the rest
//! of that file to [`ChunkReader`], which steps over it as the decode does. PyTorch's
//! single raw file has no index: its records are all walked.

use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::chunk::{is_frame_version, ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC};
use super::chunk_resync::read_full;
use super::compact::{max_section_len, ChunkDecompressor, COMPACT_HEADER_LEN};
use super::frame::{FrameIndex, TimeSpan, FRAME_INDEX_LEN};
use super::seal::SEAL_LEN;
use super::segment::SEGMENTS_DIR;
use super::{ChunkReader, Dump, DumpError};
use crate::{walk_records, Layout, RecordIter};

impl Dump {
    /// First start and last end of the dump's records in Unix ns (records on another
    /// client's clock converted, as the decode converts them); empty when there are no
    /// timed records. Cheap for segmented dumps (see the module docs); a full walk of
    /// PyTorch's single-file layout.
    pub fn time_span(&self) -> Result<TimeSpan, DumpError> {
        let Some(list) = self.segments() else {
            return self.walked_span();
        };
        let mut native = TimeSpan::EMPTY;
        let mut foreign = TimeSpan::EMPTY;
        let mut frames = FrameSpans::new(self);
        for file in &list.live {
            match &file.summary {
                Some(s) => {
                    if let (Some(a), Some(b)) = (s.first_ns, s.last_ns) {
                        native.add(a, b);
                    }
                    if let (Some(a), Some(b)) = (s.foreign_first, s.foreign_last) {
                        foreign.add(a, b);
                    }
                }
                None => {
                    let name = file.path.file_name().unwrap_or_default().to_string_lossy();
                    let label = format!("{SEGMENTS_DIR}/{name}");
                    let index = frames
                        .segment(&file.path, &label)
                        .map_err(|e| DumpError::io(&label, e))?;
                    native.join(index.native);
                    foreign.join(index.foreign);
                }
            }
        }
        if let Some((first, last)) = foreign.get() {
            // As the walk does: without a clock fit, those records are left out.
            if let Some(c) = self.clock_samples().fit() {
                native.add(c.to_unix(first), c.to_unix(last));
            }
        }
        Ok(native)
    }

    /// The span by decoding every record (the single-file layout).
    fn walked_span(&self) -> Result<TimeSpan, DumpError> {
        let mut index = FrameIndex::default();
        walk_records(self, |_| {}, |_, _, record| index.add(record))?;
        Ok(index.native)
    }
}

/// Reads the frame indexes of unclosed segments.
struct FrameSpans {
    layout: Option<Layout>,
    max_frame: Option<u64>,
    max_buffer: usize,
    decompressor: Option<ChunkDecompressor>,
    data: Vec<u8>,
    out: Vec<u8>,
}

impl FrameSpans {
    fn new(dump: &Dump) -> Self {
        let buffer_size = dump.meta().buffer_size();
        Self {
            layout: dump.meta().cupti_version().and_then(|_| dump.layout().ok()),
            // As the decode bounds a frame (dump/buffers.rs).
            max_frame: buffer_size.map(|b| {
                max_section_len(b.min(u64::from(u32::MAX)) as u32)
                    + (COMPACT_HEADER_LEN + FRAME_INDEX_LEN + SEAL_LEN) as u64
            }),
            max_buffer: buffer_size.map_or(usize::MAX, |b| b as usize),
            decompressor: None,
            data: Vec::new(),
            out: Vec::new(),
        }
    }

    /// The joined index of every frame of the segment at `path`.
    fn segment(&mut self, path: &Path, label: &str) -> io::Result<FrameIndex> {
        let (file, len) =
            cupmon_files::open_regular(path).map_err(cupmon_files::FileError::into_io)?;
        let mut file = BufReader::with_capacity(64 << 10, file);
        let mut all = FrameIndex::default();
        let mut pos = 0u64;
        let mut next_index = 0u32;
        let mut raw = [0u8; CHUNK_HEADER_LEN];
        while pos < len {
            let got = read_full(&mut |b| file.read(b), &mut raw)?;
            let (magic, version, header) = ChunkHeader::parse(&raw);
            let size = u64::from(header.valid_size);
            let end = pos + CHUNK_HEADER_LEN as u64 + size;
            let sound = got == CHUNK_HEADER_LEN
                && magic == CHUNK_MAGIC
                && is_frame_version(version)
                && self.max_frame.is_none_or(|m| size <= m)
                && size >= header.frame_body_at() as u64
                && end <= len;
            if !sound {
                // Damage or a cut last frame: the decode's reader decides what survives.
                file.seek(SeekFrom::Start(pos))?;
                let mut rest = ChunkReader::new(file, label, Some(len - pos))
                    .with_frames()
                    .with_max_chunk_size(self.max_frame)
                    .with_first_index(next_index);
                while let Ok(Some(chunk)) = rest.next_chunk() {
                    if let Some(index) = FrameIndex::parse(chunk.data) {
                        let body_at = chunk.header.frame_body_at();
                        let index = self.complete(index, chunk.data, body_at);
                        join(&mut all, &index);
                    }
                }
                break;
            }
            let mut prefix = [0u8; FRAME_INDEX_LEN];
            file.read_exact(&mut prefix)?;
            let index = FrameIndex::parse(&prefix).unwrap_or_default();
            if index.records == 0 && size > FRAME_INDEX_LEN as u64 {
                // No index written: the records themselves say.
                self.data.clear();
                self.data.extend_from_slice(&prefix);
                (&mut file)
                    .take(size - FRAME_INDEX_LEN as u64)
                    .read_to_end(&mut self.data)?;
                let data = std::mem::take(&mut self.data);
                let index = self.complete(index, &data, header.frame_body_at());
                self.data = data;
                join(&mut all, &index);
            } else {
                join(&mut all, &index);
                file.seek(SeekFrom::Start(end))?;
            }
            pos = end;
            next_index = header.index.wrapping_add(1);
        }
        Ok(all)
    }

    /// `index`, or for a frame without one, the index of its records (nothing when it
    /// cannot be decompressed: the decode skips such a frame too).
    fn complete(&mut self, index: FrameIndex, frame: &[u8], body_at: usize) -> FrameIndex {
        if index.records != 0 || frame.len() <= body_at {
            return index;
        }
        let Some(layout) = self.layout else {
            return index;
        };
        let d = self
            .decompressor
            .get_or_insert_with(|| ChunkDecompressor::new(layout));
        if d.decompress_into(&frame[body_at..], self.max_buffer, &mut self.out)
            .is_err()
        {
            return index;
        }
        let mut rebuilt = FrameIndex::default();
        for record in RecordIter::new(&self.out, layout).map_while(Result::ok) {
            rebuilt.add(&record);
        }
        rebuilt
    }
}

fn join(all: &mut FrameIndex, index: &FrameIndex) {
    all.records = all.records.saturating_add(index.records);
    all.kernels = all.kernels.saturating_add(index.kernels);
    all.native.join(index.native);
    all.foreign.join(index.foreign);
}
