//! Opening a dump directory for reading.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::dump_annotations::DumpAnnotations;
use super::segment::{list_segments_of, SegmentList};
use super::{
    ChunkReader, DumpError, DumpWarning, KernelNameTable, MetaFile, KERNEL_NAMES_FILE, META_FILE,
    RAW_BUFFERS_FILE,
};
use crate::{ClockSamples, Layout};

/// A dump directory opened for reading: the meta and the side files are read at open
/// (of the annotation log only what its index does not cover, see
/// [`Dump::user_annotations_named`]); the raw buffers are streamed by [`Dump::chunks`].
#[derive(Debug, Clone)]
pub struct Dump {
    dir: PathBuf,
    meta: MetaFile,
    kernel_names: KernelNameTable,
    user_annotations: DumpAnnotations,
    warnings: Vec<DumpWarning>,
    /// `None` for PyTorch's single-file layout.
    segments: Option<SegmentList>,
    /// `python_stacks.jsonl` and `launch_stacks.bin`, read at first use.
    stacks: Arc<OnceLock<Arc<super::StackTable>>>,
}

impl Dump {
    /// Open `dir`: the meta must be there and sound; the side files (`kernel_names.tsv`,
    /// `user_annotations.jsonl`, `user_annotations.json`) may be missing, or damaged as
    /// a crash leaves them (see [`Dump::warnings`]), not malformed.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, DumpError> {
        let dir = dir.as_ref().to_path_buf();
        let meta_path = dir.join(META_FILE);
        let meta = MetaFile::read(&meta_path)?;
        let mut warnings = Vec::new();
        if meta.session_open() {
            if let Some(problem) = super::meta::failed_update(&meta_path) {
                warnings.push(DumpWarning::MetaNotUpdated {
                    file: META_FILE.to_owned(),
                    problem,
                });
            }
        }
        let kernel_names = KernelNameTable::read(dir.join(KERNEL_NAMES_FILE));
        warnings.extend(kernel_names.warnings().iter().cloned());
        let (user_annotations, annotation_warnings) = DumpAnnotations::open(&dir);
        warnings.extend(annotation_warnings);
        let segments = list_segments_of(&dir, meta.dump_id())?;
        if let Some(list) = &segments {
            warnings.extend(list.warnings.iter().cloned());
            if list.retired.segments > 0 {
                warnings.push(DumpWarning::Retired(list.retired.clone()));
            }
        }
        Ok(Self {
            dir,
            meta,
            kernel_names,
            user_annotations,
            warnings,
            segments,
            stacks: Arc::default(),
        })
    }

    /// The dump's segments (cupmon's flight-recorder layout); `None` for PyTorch's
    /// single raw-buffer file.
    pub fn segments(&self) -> Option<&SegmentList> {
        self.segments.as_ref()
    }

    /// The same dump with only `live` of its segments (a reader that has the others'
    /// numbers already, from their digests).
    pub fn with_live_segments(&self, live: Vec<super::SegmentFile>) -> Dump {
        let mut dump = self.clone();
        if let Some(list) = &mut dump.segments {
            list.live = live;
        }
        dump
    }

    /// What older data was retired to keep the budget (nothing for a raw file).
    pub fn retired(&self) -> super::Retired {
        self.segments
            .as_ref()
            .map(|s| s.retired.clone())
            .unwrap_or_default()
    }

    /// Total bytes of the activity buffers' files (raw file or segments).
    pub fn buffer_file_bytes(&self) -> u64 {
        match &self.segments {
            Some(list) => list
                .live
                .iter()
                .filter_map(|f| std::fs::metadata(&f.path).ok())
                .map(|m| m.len())
                .sum(),
            None => std::fs::metadata(self.raw_buffers_path()).map_or(0, |m| m.len()),
        }
    }

    /// Damage the side files showed at open (a cut last line, bad lines, a file not
    /// read): warnings to print with the decode's own ([`crate::walk_records`] puts
    /// them first in its report).
    pub fn warnings(&self) -> &[DumpWarning] {
        &self.warnings
    }

    /// The process's last update of the meta did not reach the disk (a
    /// [`DumpWarning::MetaNotUpdated`] is among [`Dump::warnings`]).
    pub fn meta_not_updated(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| matches!(w, DumpWarning::MetaNotUpdated { .. }))
    }

    /// Damage found in the annotation log after open, reading the part of it that its
    /// index let open skip (by [`Dump::user_annotations`] or
    /// [`Dump::user_annotations_named`]): warnings to print after those of the walk.
    pub fn annotation_warnings(&self) -> Vec<DumpWarning> {
        self.user_annotations.late_warnings()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn meta(&self) -> &MetaFile {
        &self.meta
    }

    /// The record layout of the CUPTI version the meta names.
    pub fn layout(&self) -> Result<Layout, DumpError> {
        let Some(api) = self.meta.cupti_version() else {
            return Err(DumpError::meta(
                META_FILE,
                "no cupti_version key: cannot tell which CUPTI record layout the buffers use",
            ));
        };
        Layout::for_api_version(api).map_err(|source| DumpError::UnsupportedVersion {
            file: META_FILE.to_owned(),
            source,
        })
    }

    /// Path of the raw-buffer file.
    pub fn raw_buffers_path(&self) -> PathBuf {
        self.dir.join(RAW_BUFFERS_FILE)
    }

    /// A fresh streaming reader over the raw buffers (chunks larger than the meta's
    /// `buffer_size` are reported as corrupt).
    pub fn chunks(&self) -> Result<ChunkReader<BufReader<File>>, DumpError> {
        Ok(
            ChunkReader::open(self.raw_buffers_path())?
                .with_max_chunk_size(self.meta.buffer_size()),
        )
    }

    /// Every sample of a foreign clock the dump holds: the (CUPTI, Unix) completion
    /// times of each chunk header (read without the chunks' data) and the monitor's own
    /// samples in the meta (`clock_samples`). Damage is stepped over quietly: the decode
    /// itself reports it.
    pub fn clock_samples(&self) -> ClockSamples {
        let mut samples = ClockSamples::new();
        if let Some(pairs) = self
            .meta
            .json()
            .get("clock_samples")
            .and_then(|v| v.as_array())
        {
            for pair in pairs {
                if let (Some(c), Some(u)) = (pair[0].as_u64(), pair[1].as_u64()) {
                    samples.add(c, u);
                }
            }
        }
        let add_headers = |samples: &mut ClockSamples, path: &Path| {
            if let Ok(headers) = super::chunk_headers(path) {
                for h in headers {
                    samples.add(
                        h.completion.cupti_completed_ns,
                        h.completion.unix_completed_ns,
                    );
                }
            }
        };
        match &self.segments {
            None => add_headers(&mut samples, &self.raw_buffers_path()),
            Some(list) => {
                for file in &list.live {
                    match &file.summary {
                        Some(s) => {
                            for [c, u] in &s.clock {
                                samples.add(*c, *u);
                            }
                        }
                        None => add_headers(&mut samples, &file.path),
                    }
                }
            }
        }
        samples
    }

    /// The Python stacks that launched the dump's kernels (empty when none were noted),
    /// read at the first call; its warnings are the table's own.
    pub fn python_stacks(&self) -> &Arc<super::StackTable> {
        self.stacks
            .get_or_init(|| Arc::new(super::StackTable::read(&self.dir)))
    }

    pub fn kernel_names(&self) -> &KernelNameTable {
        &self.kernel_names
    }

    /// Every user annotation (CUSTOM1 external id -> name); the log's lines are read on
    /// the first call, not at open.
    pub fn user_annotations(&self) -> Result<&BTreeMap<u64, String>, DumpError> {
        self.user_annotations.all()
    }

    /// The user annotations of `ids` (those the dump names), reading only the part of
    /// the log that may hold them: what a slice needs.
    pub fn user_annotations_named(
        &self,
        ids: &BTreeSet<u64>,
    ) -> Result<BTreeMap<u64, String>, DumpError> {
        self.user_annotations.named(ids)
    }
}
