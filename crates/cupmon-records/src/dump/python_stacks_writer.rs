//! Writing the stack side files (`python_stacks.rs` describes them) as the monitor
//! learns stacks and sees their launches' records: the table, and a raw dump's one
//! launch-stack file (a segmented dump's go into its segments: `SegmentWriter`). Files
//! are made at the first entry, so a dump of a program without Python has none.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::launch_stacks::{launch_entries, launch_stacks_header, LAUNCH_STACKS_FILE};
use super::python_stacks::{StackLine, PYTHON_STACKS_FILE};
use super::DumpError;

/// The stack side files of one dump directory.
#[derive(Debug)]
pub struct StackFilesWriter {
    dir: PathBuf,
    table: Option<BufWriter<File>>,
    launches: Option<BufWriter<File>>,
    /// Bytes written to `launch_stacks.bin` (a raw dump's budget counts them).
    launch_bytes: u64,
}

fn open(dir: &Path, file: &str, header: &[u8]) -> Result<BufWriter<File>, DumpError> {
    let path = dir.join(file);
    let mut out = OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(&path)
        .map(|f| BufWriter::with_capacity(1 << 16, f))
        .map_err(|e| DumpError::io(file, e))?;
    out.write_all(header).map_err(|e| DumpError::io(file, e))?;
    Ok(out)
}

impl StackFilesWriter {
    pub fn new(dir: impl AsRef<Path>) -> Self {
        Self {
            dir: dir.as_ref().to_path_buf(),
            table: None,
            launches: None,
            launch_bytes: 0,
        }
    }

    /// New frames and stacks, written before any launch that names them.
    pub fn add_lines(&mut self, lines: &[StackLine]) -> Result<(), DumpError> {
        if lines.is_empty() {
            return Ok(());
        }
        let out = match &mut self.table {
            Some(out) => out,
            None => self.table.insert(open(&self.dir, PYTHON_STACKS_FILE, b"")?),
        };
        for line in lines {
            out.write_all(&line.to_line())
                .map_err(|e| DumpError::io(PYTHON_STACKS_FILE, e))?;
        }
        Ok(())
    }

    /// `(correlation id, stack)` of launches whose records arrived, into the dump's one
    /// `launch_stacks.bin` (a raw dump's).
    pub fn add_launches(&mut self, pairs: &[(u32, u32)]) -> Result<(), DumpError> {
        if pairs.is_empty() {
            return Ok(());
        }
        let out = match &mut self.launches {
            Some(out) => out,
            None => self.launches.insert(open(
                &self.dir,
                LAUNCH_STACKS_FILE,
                &launch_stacks_header(),
            )?),
        };
        if self.launch_bytes == 0 {
            self.launch_bytes = launch_stacks_header().len() as u64;
        }
        let entries = launch_entries(pairs);
        self.launch_bytes += entries.len() as u64;
        out.write_all(&entries)
            .map_err(|e| DumpError::io(LAUNCH_STACKS_FILE, e))
    }

    /// Bytes of the launch file written so far.
    pub fn launch_bytes(&self) -> u64 {
        self.launch_bytes
    }

    /// The table first: a launch entry on disk always has its stack there.
    pub fn flush(&mut self) -> Result<(), DumpError> {
        if let Some(out) = &mut self.table {
            out.flush()
                .map_err(|e| DumpError::io(PYTHON_STACKS_FILE, e))?;
        }
        if let Some(out) = &mut self.launches {
            out.flush()
                .map_err(|e| DumpError::io(LAUNCH_STACKS_FILE, e))?;
        }
        Ok(())
    }
}
