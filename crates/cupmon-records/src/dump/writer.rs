//! Writing a whole dump directory: meta, activity buffers (PyTorch's single raw file,
//! or cupmon's compressed segments), and the side files.

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::frame::FrameIndex;
use super::python_stacks::StackLine;
use super::python_stacks_writer::StackFilesWriter;
use super::segment::{Retired, SEGMENTS_DIR};
use super::segment_writer::{SegmentPolicy, SegmentStats, SegmentWriter};
use super::DumpId;
use super::{
    write_kernel_name_line, AnnotationLog, BufferCompletion, ChunkHeader, ChunkWriter, DumpError,
    KernelNameTable, MetaFile, CHUNK_HEADER_LEN, KERNEL_NAMES_FILE, META_FILE, RAW_BUFFERS_FILE,
};
use crate::Layout;

/// The id `meta` names (a caller that chose one), or a fresh one.
fn dump_id(meta: &MetaFile) -> DumpId {
    meta.dump_id().unwrap_or_else(DumpId::generate)
}

/// Where the activity buffers go.
#[derive(Debug)]
enum Buffers {
    /// PyTorch's `cupti_monitor_raw_buffers.bin`; with a budget, writing stops there.
    Raw {
        chunks: ChunkWriter<BufWriter<File>>,
        budget: Option<u64>,
        full: bool,
    },
    Segments(Box<SegmentWriter>),
}

/// What one buffer write came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferWritten {
    /// Written: its chunk header and the bytes it took on disk; `retired`: segments were
    /// retired on the way (see [`DumpWriter::retired`]; the meta is the caller's to
    /// rewrite, [`DumpWriter::update_meta`] adds the `retired` key).
    Written {
        header: ChunkHeader,
        bytes: u64,
        retired: bool,
    },
    /// Not written: a `--raw` dump reached its budget.
    OverBudget,
}

/// Writes a dump directory. Kernel names are appended to `kernel_names.tsv` the first
/// time a pointer is seen, so a crash loses at most the buffered tail; annotations are
/// appended to `user_annotations.jsonl` likewise (unbuffered). Call
/// [`DumpWriter::finish`] to flush and see errors.
#[derive(Debug)]
pub struct DumpWriter {
    dir: PathBuf,
    buffers: Buffers,
    names: KernelNameTable,
    names_out: BufWriter<File>,
    annotations: Option<AnnotationLog>,
    annotated: HashSet<u64>,
    /// The dump's id: in the meta, and in each segment's frames and digest (a raw
    /// dump, PyTorch's layout, has none).
    id: Option<DumpId>,
    /// The Python stacks' table (and a raw dump's launch → stack pairs).
    stacks: StackFilesWriter,
}

impl DumpWriter {
    /// Create `dir` (if needed) and its files, writing `meta` first: PyTorch's layout,
    /// one raw-buffer file without a budget.
    pub fn create(dir: impl AsRef<Path>, meta: &MetaFile) -> Result<Self, DumpError> {
        Self::create_raw(dir, meta, None)
    }

    /// PyTorch's layout; past `budget` bytes of raw buffers, buffers are refused.
    pub fn create_raw(
        dir: impl AsRef<Path>,
        meta: &MetaFile,
        budget: Option<u64>,
    ) -> Result<Self, DumpError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| DumpError::io(&dir.display().to_string(), e))?;
        let chunks = ChunkWriter::create(dir.join(RAW_BUFFERS_FILE))
            .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?;
        let buffers = Buffers::Raw {
            chunks,
            budget,
            full: false,
        };
        Self::with_buffers(dir, meta, buffers)
    }

    /// cupmon's flight-recorder layout: compressed segments under `policy`.
    pub fn create_segmented(
        dir: impl AsRef<Path>,
        meta: &MetaFile,
        policy: SegmentPolicy,
    ) -> Result<Self, DumpError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| DumpError::io(&dir.display().to_string(), e))?;
        let segments = SegmentWriter::create(&dir, policy, dump_id(meta))
            .map_err(|e| DumpError::io(SEGMENTS_DIR, e))?;
        Self::with_buffers(dir, meta, Buffers::Segments(Box::new(segments)))
    }

    fn with_buffers(dir: PathBuf, meta: &MetaFile, buffers: Buffers) -> Result<Self, DumpError> {
        let id = match &buffers {
            Buffers::Segments(s) => Some(s.dump_id()),
            Buffers::Raw { .. } => None,
        };
        let mut meta = meta.clone();
        if let Some(id) = id {
            meta.set("dump_id", id.to_string());
        }
        meta.write(dir.join(META_FILE))?;
        let names_out = File::create(dir.join(KERNEL_NAMES_FILE))
            .map(BufWriter::new)
            .map_err(|e| DumpError::io(KERNEL_NAMES_FILE, e))?;
        Ok(Self {
            buffers,
            names: KernelNameTable::new(),
            names_out,
            annotations: None,
            annotated: HashSet::new(),
            stacks: StackFilesWriter::new(&dir),
            dir,
            id,
        })
    }

    /// The dump's id (the meta's `dump_id`; none for a raw dump): a meta rewritten by
    /// the caller must keep it ([`DumpWriter::annotate_meta`] sets it), or readers take
    /// the segments for another dump's.
    pub fn dump_id(&self) -> Option<DumpId> {
        self.id
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Segments' digests carry the launch counter's readings at their open and close
    /// (see [`crate::digest::LaunchCounterSpan`]); a raw dump has no digests.
    pub fn count_launches_with(&mut self, probe: super::segment_writer::LaunchProbe) {
        if let Buffers::Segments(s) = &mut self.buffers {
            s.count_launches_with(probe);
        }
    }

    /// Append one completed activity buffer's valid bytes as a chunk (a raw dump's
    /// chunk, or an uncompressed frame without time index in a segmented one: use
    /// [`DumpWriter::write_buffer`] there).
    pub fn write_chunk(
        &mut self,
        completion: BufferCompletion,
        data: &[u8],
    ) -> Result<ChunkHeader, DumpError> {
        match self.write_buffer(completion, data, None, &FrameIndex::default(), true)? {
            BufferWritten::Written { header, .. } => Ok(header),
            BufferWritten::OverBudget => Err(DumpError::io(
                RAW_BUFFERS_FILE,
                std::io::Error::other("the dump reached its budget"),
            )),
        }
    }

    /// Append one completed activity buffer. For segments, `layout` (its record layout,
    /// when known) and `index` (its records' time index) make the frame; `behind`
    /// stores it uncompressed (the writer is late). Segments retired on the way are
    /// recorded in the meta.
    pub fn write_buffer(
        &mut self,
        completion: BufferCompletion,
        data: &[u8],
        layout: Option<Layout>,
        index: &FrameIndex,
        behind: bool,
    ) -> Result<BufferWritten, DumpError> {
        // The launches' stacks are part of what the budget holds.
        let stack_bytes = self.stacks.launch_bytes();
        match &mut self.buffers {
            Buffers::Raw {
                chunks,
                budget,
                full,
            } => {
                let bytes = (CHUNK_HEADER_LEN + data.len()) as u64;
                let held = chunks.bytes_written() + stack_bytes;
                if *full || budget.is_some_and(|b| held + bytes > b) {
                    *full = true;
                    return Ok(BufferWritten::OverBudget);
                }
                let header = chunks
                    .write_chunk(completion, data)
                    .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?;
                Ok(BufferWritten::Written {
                    header,
                    bytes,
                    retired: false,
                })
            }
            Buffers::Segments(segments) => {
                let before = segments.stats().bytes_written;
                let (header, retired) = segments
                    .write(completion, data, layout, index, behind)
                    .map_err(|e| DumpError::io(SEGMENTS_DIR, e))?;
                let bytes = segments.stats().bytes_written - before;
                Ok(BufferWritten::Written {
                    header,
                    bytes,
                    retired,
                })
            }
        }
    }

    /// Write `data`, one buffer of records in `layout`, as the monitor's writer does
    /// with a buffer CUPTI returns: each record indexed and digested, then the buffer
    /// written, completed at `completed_ns(&index)`. For tests, benchmarks and fuzz
    /// targets that make dumps from records; a record that does not decode is an error.
    pub fn write_records(
        &mut self,
        data: &[u8],
        layout: Layout,
        completed_ns: impl FnOnce(&FrameIndex) -> u64,
    ) -> Result<BufferWritten, DumpError> {
        let mut index = FrameIndex::default();
        for r in crate::RecordIter::new(data, layout) {
            let r = r.map_err(|source| DumpError::BadRecords {
                file: "(buffer to write)".to_string(),
                chunk: 0,
                byte: 0,
                source,
            })?;
            index.add(&r);
            self.digest_record(&r);
        }
        let done = completed_ns(&index);
        let completion = BufferCompletion {
            stream_id: 0,
            context: 0,
            cupti_completed_ns: done,
            unix_completed_ns: done,
        };
        self.write_buffer(completion, data, Some(layout), &index, false)
    }

    /// Digest `record` for the segment its buffer goes into next ([`crate::digest`]);
    /// a raw dump keeps no digests. Call it for each record of a buffer, after its
    /// kernel names and before [`DumpWriter::write_buffer`].
    pub fn digest_record(&mut self, record: &crate::Record) {
        if let Buffers::Segments(s) = &mut self.buffers {
            s.digest_record(record, &self.names);
        }
    }

    /// `records` of the next buffer are not digested (the writer is behind): readers
    /// then digest its segment from the records.
    pub fn digest_skipped(&mut self, records: u64) {
        if let Buffers::Segments(s) = &mut self.buffers {
            s.digest_skipped(records);
        }
    }

    /// What the segment writer did (`None` for a raw dump).
    pub fn segment_stats(&self) -> Option<SegmentStats> {
        match &self.buffers {
            Buffers::Segments(s) => Some(s.stats()),
            Buffers::Raw { .. } => None,
        }
    }

    /// Whether a `--raw` dump has reached its budget.
    pub fn over_budget(&self) -> bool {
        matches!(self.buffers, Buffers::Raw { full: true, .. })
    }

    /// What was retired so far (nothing for a raw dump).
    pub fn retired(&self) -> Retired {
        match &self.buffers {
            Buffers::Segments(s) => s.retired().clone(),
            Buffers::Raw { .. } => Retired::default(),
        }
    }

    /// `meta` plus what this writer knows: the dump's id, what was retired, whether a
    /// `--raw` dump reached its budget.
    pub fn annotate_meta(&self, meta: &mut MetaFile) {
        if let Some(id) = self.id {
            meta.set("dump_id", id.to_string());
        }
        let retired = self.retired();
        if retired.segments > 0 {
            meta.set(
                "retired",
                serde_json::to_value(&retired).unwrap_or_default(),
            );
        }
        if self.over_budget() {
            meta.set("raw_budget_reached", true);
        }
    }

    /// Record a kernel name; a pointer already written is ignored.
    pub fn add_kernel_name(&mut self, ptr: u64, name: &str) -> Result<(), DumpError> {
        if self.names.insert(ptr, name) {
            write_kernel_name_line(&mut self.names_out, ptr, name)
                .map_err(|e| DumpError::io(KERNEL_NAMES_FILE, e))?;
        }
        Ok(())
    }

    /// Names written so far.
    pub fn kernel_names(&self) -> &KernelNameTable {
        &self.names
    }

    /// Record an annotation in `user_annotations.jsonl`; an id already written is
    /// ignored.
    pub fn add_user_annotation(&mut self, id: u64, name: &str) -> Result<(), DumpError> {
        if self.annotated.contains(&id) {
            return Ok(());
        }
        let log = match &mut self.annotations {
            Some(log) => log,
            None => self.annotations.insert(AnnotationLog::open(&self.dir)?),
        };
        log.append(id, name)?;
        self.annotated.insert(id);
        Ok(())
    }

    /// Record every annotation of `annotations` not written yet.
    pub fn write_user_annotations(
        &mut self,
        annotations: &BTreeMap<u64, String>,
    ) -> Result<(), DumpError> {
        for (&id, name) in annotations {
            self.add_user_annotation(id, name)?;
        }
        Ok(())
    }

    /// Rewrite the meta (e.g. with `dropped_records` at the end of a session); the
    /// writer adds what was retired.
    pub fn update_meta(&mut self, meta: &MetaFile) -> Result<(), DumpError> {
        let mut meta = meta.clone();
        self.annotate_meta(&mut meta);
        meta.write(self.dir.join(META_FILE))
    }

    /// Python stacks learnt (`lines`, written first: a pair on disk always finds its
    /// stack) and `(correlation id, stack)` of the launches whose records came in the
    /// buffer just written: a segmented dump keeps those in that buffer's segment, so
    /// they are retired with it; a raw dump past its budget keeps none.
    pub fn add_python_stacks(
        &mut self,
        lines: &[StackLine],
        pairs: &[(u32, u32)],
    ) -> Result<(), DumpError> {
        self.stacks.add_lines(lines)?;
        self.stacks.flush()?;
        match &mut self.buffers {
            Buffers::Raw { full: true, .. } => Ok(()),
            Buffers::Raw { .. } => {
                self.stacks.add_launches(pairs)?;
                self.stacks.flush()
            }
            Buffers::Segments(s) => s
                .add_launch_stacks(pairs)
                .and_then(|()| s.flush())
                .map_err(|e| DumpError::io(SEGMENTS_DIR, e)),
        }
    }

    /// Flush buffered chunk bytes and names to the files.
    pub fn flush(&mut self) -> Result<(), DumpError> {
        match &mut self.buffers {
            Buffers::Raw { chunks, .. } => chunks
                .flush()
                .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?,
            Buffers::Segments(s) => s.flush().map_err(|e| DumpError::io(SEGMENTS_DIR, e))?,
        }
        self.names_out
            .flush()
            .map_err(|e| DumpError::io(KERNEL_NAMES_FILE, e))
    }

    /// Flush everything and close the files (the active segment is closed: its line
    /// in the index is written, and the budget applied). Returns what was retired in
    /// all, for the final meta.
    pub fn finish(mut self) -> Result<Retired, DumpError> {
        self.flush()?;
        match self.buffers {
            Buffers::Raw { chunks, .. } => {
                let file = chunks
                    .finish()
                    .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?;
                file.get_ref()
                    .sync_data()
                    .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?;
                Ok(Retired::default())
            }
            Buffers::Segments(ref mut s) => {
                s.finish().map_err(|e| DumpError::io(SEGMENTS_DIR, e))?;
                Ok(s.retired().clone())
            }
        }
    }
}
