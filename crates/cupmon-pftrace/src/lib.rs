//! Perfetto protobuf traces (`.pftrace`), written as a stream.
//!
//! A `.pftrace` file is a Perfetto `Trace`: length-delimited `TracePacket`s
//! carrying `TrackEvent`s on tracks declared by `TrackDescriptor`s. Compared
//! with the Chrome JSON trace cupmon also writes, names are interned (a
//! kernel name costs its bytes once), numbers are varints, and overlapping
//! slices on one stream stay visible on overlap tracks. Timestamps are
//! nanoseconds on CLOCK_REALTIME, so traces of several hosts line up.
//!
//! The field numbers come from Perfetto's protos, vendored in `proto/`
//! (Apache-2.0) and checked by the tests. A `.pftrace.gz` is the same stream
//! through gzip (Perfetto opens both).
//!
//! ```
//! use cupmon_pftrace::{Arg, ArgValue, PftraceWriter, Slice};
//! let mut w = PftraceWriter::new(Vec::new())?;
//! w.process(0, "python", &["GPU 0"], 5_000_000)?;
//! let stream = w.thread(0, 7, "stream 7 ", 7)?;
//! let args = [Arg::new("correlation", ArgValue::Int(42))];
//! let slice = Slice { category: "kernel", args: &args, terminating_flow_ids: &[42],
//!                     ..Slice::new(1_700_000_000_000_000_000, 5_000, "gemm") };
//! w.slice(stream, &slice)?;
//! let (bytes, summary) = w.finish()?;
//! assert_eq!(summary.slices, 1);
//! # assert!(!bytes.is_empty());
//! # Ok::<(), cupmon_pftrace::PftraceError>(())
//! ```

mod args;
mod descriptor;
mod error;
mod event;
mod fields;
mod intern;
mod lanes;
mod metadata;
mod packets;
mod reorder;
mod track_event;
mod wire;
mod writer;

pub use args::{Arg, ArgValue, ArgsOut, Container, WriteArgs};
pub use descriptor::CounterUnit;
pub use error::PftraceError;
pub use event::{CounterValue, Instant, PftraceSummary, Slice, WriterOptions};
pub use metadata::MetadataValue;
pub use writer::{CounterTrackId, PftraceWriter, TrackId};
