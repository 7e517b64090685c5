//! Joining launches to their Python stacks: the worker looks each kernel's, copy's and
//! memset's correlation id up among the stacks noted at the launch callbacks
//! (`cupmon_cupti::launch_stack`) and writes the pairs, and the stacks new since the
//! last buffer, to the dump's stack side files (`cupmon_records::dump::python_stacks`).

use std::path::Path;

use cupmon_records::dump::{StackFilesWriter, StackFrame, StackLine};
use cupmon_records::{DumpError, Record};

/// Starts noting stacks at the launch callbacks when the process runs a CPython the
/// walker reads; returns what the meta says of it (`"CPython 3.12.1"`, or why not).
pub(crate) fn start(wanted: bool, counting: bool) -> String {
    if !wanted {
        return "off (CUPMON_PYTHON_STACKS=0)".to_owned();
    }
    if !counting {
        return "off: they are noted by the launch callbacks, and launches are not counted"
            .to_owned();
    }
    match cupmon_cupti::start_python_stacks() {
        Ok(python) => {
            cupmon_log::info!("noting the Python stack of each launch ({python})");
            python
        }
        Err(why) => {
            if why.contains("Py_Version") {
                // Not a Python program (or a Python older than 3.11): nothing to say.
                cupmon_log::info!("no Python stacks: {why}");
            } else {
                cupmon_log::warn!("the Python stacks of launches are not noted: {why}");
            }
            format!("off: {why}")
        }
    }
}

pub(crate) fn stop() {
    cupmon_cupti::stop_python_stacks();
}

/// The worker's half: pairs of this buffer, and the side files.
#[derive(Debug)]
pub(crate) struct StackJoin {
    files: StackFilesWriter,
    pairs: Vec<(u32, u32)>,
    /// The process's stacks so far are written before the first pair (a second session
    /// of the process interned them for an earlier dump).
    started: bool,
    /// GPU work records whose launch had no stack noted (or an overwritten one).
    pub unattributed: u64,
    pub attributed: u64,
}

impl StackJoin {
    pub fn new(dir: &Path) -> Self {
        Self {
            files: StackFilesWriter::new(dir),
            pairs: Vec::new(),
            started: false,
            unattributed: 0,
            attributed: 0,
        }
    }

    /// One record of a buffer.
    #[inline]
    pub fn see(&mut self, record: &Record) {
        if !matches!(record, Record::Kernel(_) | Record::Memcpy(_) | Record::Memset(_)) {
            return;
        }
        let corr = record.correlation_id();
        match cupmon_cupti::launch_stack(corr) {
            Some(stack) => {
                self.pairs.push((corr, stack));
                self.attributed += 1;
            }
            None => self.unattributed += 1,
        }
    }

    /// The buffer's pairs and the stacks they need, written and flushed.
    pub fn write(&mut self) -> Result<(), DumpError> {
        if self.pairs.is_empty() {
            return Ok(());
        }
        let mut new = cupmon_pystack::take_new();
        if !self.started {
            self.started = true;
            new = cupmon_pystack::all();
        }
        let mut lines = Vec::with_capacity(new.frames.len() + new.stacks.len());
        for (id, f) in new.frames {
            lines.push(StackLine::Frame {
                frame: id,
                at: StackFrame {
                    file: f.file,
                    function: f.function,
                    line: f.line,
                    origin: f.origin.label().map(str::to_owned),
                },
            });
        }
        for s in new.stacks {
            lines.push(StackLine::Stack {
                stack: s.id,
                frames: s.frames,
                truncated: s.truncated,
            });
        }
        self.files.add_lines(&lines)?;
        self.files.add_launches(&self.pairs)?;
        self.pairs.clear();
        self.files.flush()
    }
}
