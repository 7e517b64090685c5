//! Writing a whole dump directory: meta, raw buffers, and the side files.

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{
    write_kernel_name_line, AnnotationLog, BufferCompletion, ChunkHeader, ChunkWriter, DumpError,
    KernelNameTable, MetaFile, KERNEL_NAMES_FILE, META_FILE, RAW_BUFFERS_FILE,
};

/// Writes a dump directory. Kernel names are appended to `kernel_names.tsv` the first
/// time a pointer is seen, so a crash loses at most the buffered tail; annotations are
/// appended to `user_annotations.jsonl` likewise (unbuffered). Call
/// [`DumpWriter::finish`] to flush and see errors.
#[derive(Debug)]
pub struct DumpWriter {
    dir: PathBuf,
    chunks: ChunkWriter<BufWriter<File>>,
    names: KernelNameTable,
    names_out: BufWriter<File>,
    annotations: Option<AnnotationLog>,
    annotated: HashSet<u64>,
}

impl DumpWriter {
    /// Create `dir` (if needed) and its files, writing `meta` first.
    pub fn create(dir: impl AsRef<Path>, meta: &MetaFile) -> Result<Self, DumpError> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| DumpError::io(&dir.display().to_string(), e))?;
        meta.write(dir.join(META_FILE))?;
        let chunks = ChunkWriter::create(dir.join(RAW_BUFFERS_FILE))
            .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?;
        let names_out = File::create(dir.join(KERNEL_NAMES_FILE))
            .map(BufWriter::new)
            .map_err(|e| DumpError::io(KERNEL_NAMES_FILE, e))?;
        Ok(Self {
            dir,
            chunks,
            names: KernelNameTable::new(),
            names_out,
            annotations: None,
            annotated: HashSet::new(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Append one completed activity buffer's valid bytes as a chunk.
    pub fn write_chunk(
        &mut self,
        completion: BufferCompletion,
        data: &[u8],
    ) -> Result<ChunkHeader, DumpError> {
        self.chunks
            .write_chunk(completion, data)
            .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))
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

    /// Rewrite the meta (e.g. with `dropped_records` at the end of a session).
    pub fn update_meta(&mut self, meta: &MetaFile) -> Result<(), DumpError> {
        meta.write(self.dir.join(META_FILE))
    }

    /// Flush buffered chunk bytes and names to the files.
    pub fn flush(&mut self) -> Result<(), DumpError> {
        self.chunks
            .flush()
            .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?;
        self.names_out
            .flush()
            .map_err(|e| DumpError::io(KERNEL_NAMES_FILE, e))
    }

    /// Flush everything and close the files.
    pub fn finish(mut self) -> Result<(), DumpError> {
        self.flush()?;
        let file = self
            .chunks
            .finish()
            .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))?;
        file.get_ref()
            .sync_data()
            .map_err(|e| DumpError::io(RAW_BUFFERS_FILE, e))
    }
}
