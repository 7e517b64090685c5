//! A trace's output file: `cupmon-files`' [`cupmon_files::AtomicOutput`] (whole
//! or not at all, a FIFO or device written in place), gzip-compressed when its
//! name ends in `.gz` (PyTorch's merge's rule).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::TraceError;

/// Whether a path names gzip data (PyTorch's merge's rule: the name ends in `.gz`).
pub fn is_gz(path: &Path) -> bool {
    path.to_string_lossy().ends_with(".gz")
}

impl From<cupmon_files::OutputError> for TraceError {
    fn from(e: cupmon_files::OutputError) -> Self {
        TraceError::Io {
            path: e.path,
            what: e.what,
            err: e.err,
        }
    }
}

/// A trace file being written; dropped without [`AtomicOutput::commit`], a
/// regular output vanishes (an in-place one keeps what was written).
#[derive(Debug)]
pub struct AtomicOutput(cupmon_files::AtomicOutput);

impl AtomicOutput {
    pub fn create(path: &Path) -> Result<Self, TraceError> {
        Ok(Self(cupmon_files::AtomicOutput::create(path)?))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// Whether the output is written in place (see [`cupmon_files::writes_in_place`]).
    pub fn in_place(&self) -> bool {
        self.0.in_place()
    }

    /// A buffered writer into the output, compressing when the output's name
    /// ends in `.gz`.
    pub fn writer(&self) -> Result<OutputWriter, TraceError> {
        let buffered = self.0.writer()?;
        Ok(if is_gz(self.path()) {
            // Level 1: JSON still shrinks ~8x and writing stays I/O-bound.
            OutputWriter::Gz(Box::new(GzEncoder::new(buffered, Compression::fast())))
        } else {
            OutputWriter::Plain(buffered)
        })
    }

    /// Finish `writer` and move the file into place.
    pub fn commit(self, writer: OutputWriter) -> Result<(), TraceError> {
        let buffered = writer.finish().map_err(|err| TraceError::Io {
            path: self.path().to_path_buf(),
            what: "cannot write the output file",
            err,
        })?;
        Ok(self.0.commit(buffered)?)
    }
}

/// The writer behind an [`AtomicOutput`].
#[derive(Debug)]
pub enum OutputWriter {
    Plain(BufWriter<File>),
    Gz(Box<GzEncoder<BufWriter<File>>>),
}

impl OutputWriter {
    fn finish(self) -> io::Result<BufWriter<File>> {
        match self {
            OutputWriter::Plain(w) => Ok(w),
            OutputWriter::Gz(gz) => gz.finish(),
        }
    }
}

impl Write for OutputWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutputWriter::Plain(w) => w.write(buf),
            OutputWriter::Gz(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            OutputWriter::Plain(w) => w.write_all(buf),
            OutputWriter::Gz(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutputWriter::Plain(w) => w.flush(),
            OutputWriter::Gz(w) => w.flush(),
        }
    }
}
