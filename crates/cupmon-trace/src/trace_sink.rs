//! The one place where a trace's output format is decided: the writers (merge,
//! export, combine) give a [`TraceSink`] the trace's top-level members and its
//! typed events ([`crate::event`]); it writes them as Chrome JSON
//! ([`ChromeEvents`]) or as a Perfetto trace ([`PerfettoEvents`]). Either way
//! `.gz` is by name. A new output format is a new arm here and its sink.

use std::io::{self, Write};

use crate::chrome_events::ChromeEvents;
use crate::event::EventSink;
use crate::output::{AtomicOutput, OutputWriter};
use crate::pftrace::{PerfettoEvents, PftraceStats};
use crate::{TraceError, TraceFormat};

/// A trace being written, in its format.
#[derive(Debug)]
pub(crate) enum TraceSink {
    /// Chrome JSON: the document's text, `first` until a member is written.
    Json {
        out: OutputWriter,
        first: bool,
    },
    Pftrace(Box<PerfettoEvents<OutputWriter>>),
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
            TraceFormat::Json => TraceSink::Json { out, first: true },
            TraceFormat::Pftrace => TraceSink::Pftrace(Box::new(
                PerfettoEvents::new(out, base_ns).map_err(|err| TraceError::Io {
                    path: self.path().to_path_buf(),
                    what: "cannot write",
                    err,
                })?,
            )),
        })
    }

    /// Finish the trace and move the file into place; what the Perfetto
    /// trace holds, for a `.pftrace`.
    pub(crate) fn commit_trace(self, sink: TraceSink) -> Result<Option<PftraceStats>, TraceError> {
        match sink {
            TraceSink::Json { out, .. } => self.commit(out).map(|()| None),
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

impl TraceSink {
    /// Start a member of the document (`raw_key`: the key as JSON text).
    fn open_member(out: &mut OutputWriter, first: &mut bool, raw_key: &[u8]) -> io::Result<()> {
        out.write_all(if *first { b"{" } else { b"," })?;
        *first = false;
        out.write_all(raw_key)?;
        out.write_all(b":")
    }

    /// A top-level member other than `traceEvents`: its key and its value as
    /// JSON text (the trace's metadata: a CPU trace's members kept as they are,
    /// `traceName`, the `cupmon` block).
    pub fn member(&mut self, raw_key: &[u8], value: &[u8]) -> io::Result<()> {
        match self {
            TraceSink::Json { out, first } => {
                Self::open_member(out, first, raw_key)?;
                out.write_all(value)
            }
            TraceSink::Pftrace(p) => {
                let key = serde_json::from_slice::<String>(raw_key)
                    .unwrap_or_else(|_| String::from_utf8_lossy(raw_key).into_owned());
                p.member(&key, value)
            }
        }
    }

    /// The member `traceEvents` (`raw_key`), its events written by `write`.
    pub fn events<T>(
        &mut self,
        raw_key: &[u8],
        write: impl FnOnce(&mut dyn EventSink) -> Result<T, TraceError>,
    ) -> Result<T, TraceError> {
        match self {
            TraceSink::Json { out, first } => {
                Self::open_member(out, first, raw_key)?;
                out.write_all(b"[")?;
                let mut events = ChromeEvents::new(&mut *out);
                let result = write(&mut events)?;
                events.finish()?;
                out.write_all(b"]")?;
                Ok(result)
            }
            TraceSink::Pftrace(p) => write(&mut **p),
        }
    }

    /// The document's end.
    pub fn end(&mut self) -> io::Result<()> {
        match self {
            TraceSink::Json { out, first } => {
                if *first {
                    out.write_all(b"{")?;
                }
                out.write_all(b"}")
            }
            TraceSink::Pftrace(_) => Ok(()),
        }
    }
}
