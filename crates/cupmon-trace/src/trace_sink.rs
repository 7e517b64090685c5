//! The one place where a trace writer's output format is decided: the
//! writers (merge, export, combine) write Chrome JSON text into a
//! [`TraceSink`], which sends it to the file as it is, or through the
//! Perfetto conversion ([`crate::pftrace`]). Either way `.gz` is by name.

use std::io::{self, Write};

use crate::output::{AtomicOutput, OutputWriter};
use crate::pftrace::{PftraceSink, PftraceStats};
use crate::{TraceError, TraceFormat};

/// Where a trace writer writes its JSON text.
#[derive(Debug)]
pub(crate) enum TraceSink {
    Json(OutputWriter),
    Pftrace(Box<PftraceSink<OutputWriter>>),
}

impl AtomicOutput {
    /// A writer of a trace in `format`. `base_ns` is the trace's
    /// `baseTimeNanoseconds` (Perfetto's times are absolute).
    pub(crate) fn trace_writer(
        &self,
        format: TraceFormat,
        base_ns: i128,
    ) -> Result<TraceSink, TraceError> {
        let out = self.writer()?;
        Ok(match format {
            TraceFormat::Json => TraceSink::Json(out),
            TraceFormat::Pftrace => {
                TraceSink::Pftrace(Box::new(PftraceSink::new(out, base_ns).map_err(|err| {
                    TraceError::Io {
                        path: self.path().to_path_buf(),
                        what: "cannot write",
                        err,
                    }
                })?))
            }
        })
    }

    /// Finish the trace and move the file into place; what the Perfetto
    /// trace holds, for a `.pftrace`.
    pub(crate) fn commit_trace(self, sink: TraceSink) -> Result<Option<PftraceStats>, TraceError> {
        match sink {
            TraceSink::Json(w) => self.commit(w).map(|()| None),
            TraceSink::Pftrace(p) => {
                let (w, stats) = p.finish().map_err(|err| TraceError::Io {
                    path: self.path().to_path_buf(),
                    what: "cannot write",
                    err,
                })?;
                self.commit(w)?;
                Ok(Some(stats))
            }
        }
    }
}

impl Write for TraceSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            TraceSink::Json(w) => w.write(buf),
            TraceSink::Pftrace(p) => p.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            TraceSink::Json(w) => w.write_all(buf),
            TraceSink::Pftrace(p) => p.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            TraceSink::Json(w) => w.flush(),
            TraceSink::Pftrace(p) => p.flush(),
        }
    }
}
