//! The window's metadata events, as PyTorch's merge writes them: a process per GPU and per
//! CPU process, a thread per API thread and per stream, the overlap tracks of a
//! complete trace, and the overhead track when an overhead event is shown.

use std::borrow::Cow;
use std::io;

use super::{export_tid, rel_us, Entries, OVERHEAD_PID};
use crate::event::{ArgValue, EventSink, Id, Phase, TraceEvent};
use crate::merge::lanes::{lane_name, lane_tid};
use crate::merge::survey::Survey;
use crate::TraceError;

impl Entries<'_> {
    /// The metadata events, written into `sink`.
    pub fn write_metadata(&self, sink: &mut dyn EventSink) -> Result<(), TraceError> {
        let need_overhead = self.survey.need_overhead()?;
        let Survey {
            devices,
            streams,
            processes,
            threads,
            ..
        } = &self.survey;
        let base = self.base_ns;
        for (&did, &first) in devices {
            let label = Meta::Owned(format!("GPU {did}"));
            process_meta(sink, rel_us(first, base), did, label, 5_000_000 + did)?;
        }
        for (&pid, &first) in processes {
            process_meta(sink, rel_us(first, base), pid, Meta::Str("CPU"), pid)?;
        }
        for &(pid, tid) in threads {
            thread_meta(sink, pid, tid, Meta::Owned(format!("thread {tid}")), tid)?;
        }
        for &(did, rid) in streams {
            thread_meta(sink, did, rid, Meta::Owned(format!("stream {rid} ")), rid)?;
        }
        for &(did, rid, lane) in self.complete.iter().flat_map(|c| &c.overlap_tracks) {
            let tid = lane_tid(export_tid(rid), lane);
            thread_meta(sink, did, tid, Meta::Owned(lane_name(rid, lane)), tid)?;
        }
        if need_overhead {
            let p = OVERHEAD_PID;
            process_meta(sink, 0.0, p, Meta::Str("Overhead"), 0x100_0000)?;
            thread_meta(sink, p, 0, Meta::Str("thread 0"), 0)?;
        }
        Ok(())
    }
}

enum Meta<'a> {
    Str(&'a str),
    Owned(String),
    Int(i128),
}

/// `_metadata_event`.
/// A process's name ("python"), label and sort index, as PyTorch's merge writes them.
fn process_meta(
    sink: &mut dyn EventSink,
    ts: f64,
    pid: i128,
    label: Meta<'_>,
    sort: i128,
) -> io::Result<()> {
    meta(
        sink,
        "process_name",
        ts,
        (pid, 0),
        "name",
        Meta::Str("python"),
    )?;
    meta(sink, "process_labels", ts, (pid, 0), "labels", label)?;
    meta(
        sink,
        "process_sort_index",
        ts,
        (pid, 0),
        "sort_index",
        Meta::Int(sort),
    )
}

/// A thread's (or stream's) name and sort index, at ts 0 as PyTorch's merge writes them.
fn thread_meta(
    sink: &mut dyn EventSink,
    pid: i128,
    tid: i128,
    name: Meta<'_>,
    sort: i128,
) -> io::Result<()> {
    meta(sink, "thread_name", 0.0, (pid, tid), "name", name)?;
    meta(
        sink,
        "thread_sort_index",
        0.0,
        (pid, tid),
        "sort_index",
        Meta::Int(sort),
    )
}

fn meta(
    sink: &mut dyn EventSink,
    name: &str,
    ts: f64,
    (pid, tid): (i128, i128),
    arg_key: &str,
    arg: Meta<'_>,
) -> io::Result<()> {
    let value = match &arg {
        Meta::Str(s) => ArgValue::Str(s),
        Meta::Owned(s) => ArgValue::Str(s),
        Meta::Int(i) => ArgValue::Int(*i),
    };
    let args = [(arg_key, value)];
    let event = TraceEvent {
        name: Cow::Borrowed(name),
        pid: Some(Id::Int(pid)),
        tid: Some(Id::Int(export_tid(tid))),
        ts: Some(ts),
        ..TraceEvent::new(Phase::Metadata)
    };
    sink.event(&event.with_args(&args))
}
