//! Output files that appear whole or not at all: written to a temporary file
//! in the target directory, then renamed over the target. `.gz` by name.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::TraceError;

/// Whether a path names gzip data (the seed's rule: the name ends in `.gz`).
pub fn is_gz(path: &Path) -> bool {
    path.to_string_lossy().ends_with(".gz")
}

/// A file being written; dropped without [`AtomicOutput::commit`], it vanishes.
#[derive(Debug)]
pub struct AtomicOutput {
    path: PathBuf,
    temp: tempfile::NamedTempFile,
}

impl AtomicOutput {
    pub fn create(path: &Path) -> Result<Self, TraceError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            // The temp file would be 0600; a trace is an ordinary file.
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .tempfile_in(&dir)
            .map_err(|err| TraceError::Io {
                path: path.to_path_buf(),
                what: "cannot create the output file",
                err,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            temp,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A buffered writer into the temporary file, compressing when the
    /// target's name ends in `.gz`.
    pub fn writer(&self) -> Result<OutputWriter, TraceError> {
        let file = self
            .temp
            .as_file()
            .try_clone()
            .map_err(|err| TraceError::Io {
                path: self.path.clone(),
                what: "cannot open the output file",
                err,
            })?;
        let buffered = BufWriter::with_capacity(1 << 20, file);
        Ok(if is_gz(&self.path) {
            // Level 1: JSON still shrinks ~8x and writing stays I/O-bound.
            OutputWriter::Gz(Box::new(GzEncoder::new(buffered, Compression::fast())))
        } else {
            OutputWriter::Plain(buffered)
        })
    }

    /// Finish `writer` and move the file into place.
    pub fn commit(self, writer: OutputWriter) -> Result<(), TraceError> {
        let io_err = |what: &'static str| {
            let path = self.path.clone();
            move |err: io::Error| TraceError::Io { path, what, err }
        };
        let file = writer
            .finish()
            .map_err(io_err("cannot write the output file"))?;
        file.sync_all().ok();
        drop(file);
        self.temp
            .persist(&self.path)
            .map_err(|e| e.error)
            .map_err(io_err("cannot move the finished output into place"))?;
        Ok(())
    }
}

/// The writer behind an [`AtomicOutput`].
#[derive(Debug)]
pub enum OutputWriter {
    Plain(BufWriter<File>),
    Gz(Box<GzEncoder<BufWriter<File>>>),
}

impl OutputWriter {
    fn finish(self) -> io::Result<File> {
        let buffered = match self {
            OutputWriter::Plain(w) => w,
            OutputWriter::Gz(gz) => gz.finish()?,
        };
        buffered.into_inner().map_err(|e| e.into_error())
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
