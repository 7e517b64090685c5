//! The typed event stream every trace writer produces and every output format
//! consumes (as samply's `fxprof-processed-profile` is a typed model that its
//! writers fill): a [`TraceEvent`] is one event of a Kineto-style trace with its
//! fields typed (phase, pid and tid, times in µs after the trace's base time, args
//! as values, a slice's `ac2g` arrow). The merge, the export and the combine write
//! these into an [`EventSink`]; the Chrome JSON writer (`chrome_events.rs`) and the
//! Perfetto writer (`pftrace/`) are its two sinks, so adding an output format
//! means adding one sink. Events read from an input trace (a torch.profiler CPU
//! trace's, a rank's in `combine`) come as their JSON text ([`Args::Json`]).

use std::borrow::Cow;
use std::io::{self, Write};

use crate::json::value::Value;

/// A pid, tid or id: an integer, or text (a string, or another value's JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Id<'a> {
    Int(i128),
    Text(Cow<'a, str>),
}

/// What an event is (Chrome's `ph`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase<'a> {
    /// `X`: a slice with its duration.
    Complete,
    /// `B`, `E`: a slice's two ends.
    Begin,
    End,
    /// `i` (or `I`, `R`): an instant, at `scope`.
    Instant,
    /// `C`: a sample of each series of `args`.
    Counter,
    /// `s`, `t`, `f`: a flow's start, step and end (an input's; the window's
    /// arrows are [`TraceEvent::flow`]).
    FlowStart,
    FlowStep,
    FlowEnd,
    /// `M`: a process's or thread's name or sort index.
    Metadata,
    /// Any other phase (its text; empty: none), not converted.
    Other(Cow<'a, str>),
}

impl<'a> Phase<'a> {
    pub fn parse(ph: Option<Cow<'a, str>>) -> Self {
        match ph.as_deref() {
            Some("X") => Phase::Complete,
            Some("B") => Phase::Begin,
            Some("E") => Phase::End,
            Some("i" | "I" | "R") => Phase::Instant,
            Some("C") => Phase::Counter,
            Some("s") => Phase::FlowStart,
            Some("t") => Phase::FlowStep,
            Some("f") => Phase::FlowEnd,
            Some("M") => Phase::Metadata,
            _ => Phase::Other(ph.unwrap_or_default()),
        }
    }
}

/// An instant's scope (Chrome's `s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Scope {
    Global,
    Process,
    #[default]
    Thread,
}

/// A value of an event's args.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgValue<'a> {
    Int(i128),
    Float(f64),
    Str(&'a str),
    /// A JSON value of the window (a list, a nested object).
    Value(&'a Value),
    /// A value as its JSON text (Kineto's numbers, NCCL's args).
    Json(&'a str),
    /// Kineto's grid and block dimensions: `[x, y, z]`.
    Dims([i32; 3]),
}

/// An event's args.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum Args<'a> {
    /// No `args` member.
    #[default]
    None,
    /// An object of these members, in order.
    Fields(&'a [(&'a str, ArgValue<'a>)]),
    /// An input event's `args` value, as its JSON text.
    Json(&'a [u8]),
}

/// Which end of its `ac2g` arrow (launch to GPU work) a slice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlowEnd {
    /// The launch: the arrow starts here.
    Start,
    /// The GPU work: the arrow ends here (bound to the slice).
    Finish,
}

/// One event of the trace. See the module docs.
#[derive(Debug, Clone)]
pub(crate) struct TraceEvent<'a> {
    pub ph: Phase<'a>,
    pub name: Cow<'a, str>,
    pub cat: Cow<'a, str>,
    pub pid: Option<Id<'a>>,
    pub tid: Option<Id<'a>>,
    /// µs after the trace's base time.
    pub ts: Option<f64>,
    pub dur: Option<f64>,
    pub scope: Scope,
    pub args: Args<'a>,
    /// A slice's `ac2g` arrow: its correlation id and which end the slice is.
    pub flow: Option<(i128, FlowEnd)>,
    /// An input's flow event: its id, and whether a flow end binds to the
    /// slice enclosing it (`"bp": "e"`) rather than the next one.
    pub id: Option<Id<'a>>,
    pub binds_enclosing: bool,
    /// An input's slice with flow events v2 (`bind_id`, `flow_in`, `flow_out`).
    pub bind_id: Option<Id<'a>>,
    pub flow_in: bool,
    pub flow_out: bool,
}

impl<'a> TraceEvent<'a> {
    /// An event of phase `ph` with no field set.
    pub fn new(ph: Phase<'a>) -> Self {
        Self {
            ph,
            name: Cow::Borrowed(""),
            cat: Cow::Borrowed(""),
            pid: None,
            tid: None,
            ts: None,
            dur: None,
            scope: Scope::Thread,
            args: Args::None,
            flow: None,
            id: None,
            binds_enclosing: false,
            bind_id: None,
            flow_in: false,
            flow_out: false,
        }
    }

    /// A slice (`X`) of `name` in `cat` on (`pid`, `tid`).
    pub fn slice(cat: &'a str, name: &'a str, pid: Id<'a>, tid: Id<'a>, ts: f64, dur: f64) -> Self {
        Self {
            cat: Cow::Borrowed(cat),
            name: Cow::Borrowed(name),
            pid: Some(pid),
            tid: Some(tid),
            ts: Some(ts),
            dur: Some(dur),
            ..Self::new(Phase::Complete)
        }
    }

    pub fn with_args(mut self, args: &'a [(&'a str, ArgValue<'a>)]) -> Self {
        self.args = Args::Fields(args);
        self
    }
}

/// Where a writer's events go: one of the output formats.
pub(crate) trait EventSink {
    /// One event of the trace's own (the window's, the profiler span).
    fn event(&mut self, e: &TraceEvent<'_>) -> io::Result<()>;
    /// Events of an input trace as its JSON text (elements of `traceEvents`
    /// with the commas between them), written by `copy`.
    fn input_events(
        &mut self,
        copy: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()>;
    /// Events given to [`EventSink::event`] so far, as Chrome JSON counts them
    /// (a slice with its arrow is two).
    fn written(&self) -> u64;
}
