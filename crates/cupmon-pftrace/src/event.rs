//! What the writer is given: slices, instants, counter values, options, and
//! what it reports back.

use crate::args::{Arg, WriteArgs};

/// A complete slice (the Chrome trace's `X` event). Times are nanoseconds
/// on CLOCK_REALTIME (since the Unix epoch).
#[derive(Debug, Clone, Copy)]
pub struct Slice<'a> {
    pub ts_ns: u64,
    pub dur_ns: u64,
    pub name: &'a str,
    /// Empty for none.
    pub category: &'a str,
    pub args: &'a [Arg<'a>],
    /// Args written after `args` by a [`WriteArgs`] (values read from JSON).
    pub more_args: Option<&'a dyn WriteArgs>,
    /// Flows that start (or pass) here: the `ac2g` correlation id on a launch.
    pub flow_ids: &'a [u64],
    /// Flows that end here: the correlation id on the GPU work it launched.
    pub terminating_flow_ids: &'a [u64],
}

impl<'a> Slice<'a> {
    pub fn new(ts_ns: u64, dur_ns: u64, name: &'a str) -> Self {
        Self {
            ts_ns,
            dur_ns,
            name,
            category: "",
            args: &[],
            more_args: None,
            flow_ids: &[],
            terminating_flow_ids: &[],
        }
    }
}

/// An instant event (the Chrome trace's `i`); its scope is the track it is
/// written on: a thread's, a process's, or a global named track.
#[derive(Debug, Clone, Copy)]
pub struct Instant<'a> {
    pub ts_ns: u64,
    pub name: &'a str,
    pub category: &'a str,
    pub args: &'a [Arg<'a>],
    pub more_args: Option<&'a dyn WriteArgs>,
}

impl<'a> Instant<'a> {
    pub fn new(ts_ns: u64, name: &'a str) -> Self {
        Self {
            ts_ns,
            name,
            category: "",
            args: &[],
            more_args: None,
        }
    }
}

/// A counter sample's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CounterValue {
    Int(i64),
    Double(f64),
}

impl From<i64> for CounterValue {
    fn from(v: i64) -> Self {
        CounterValue::Int(v)
    }
}

impl From<f64> for CounterValue {
    fn from(v: f64) -> Self {
        CounterValue::Double(v)
    }
}

/// Settings of a [`crate::PftraceWriter`]; the defaults suit one host's trace.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// The packets' `trusted_packet_sequence_id` (non-zero).
    pub sequence_id: u32,
    /// Added to every track uuid: give traces that will be opened together
    /// (several hosts) different bases so their tracks stay apart.
    pub uuid_base: u64,
    /// The REALTIME reading in the trace's ClockSnapshot; `None` reads the
    /// system clock when the writer starts.
    pub realtime_now_ns: Option<u64>,
    /// Other clocks read at the same instant as `realtime_now_ns`, as
    /// (Perfetto BuiltinClock id, ns): BOOTTIME (6) lets Perfetto line this
    /// trace up with a system trace of the same machine.
    pub extra_clocks: Vec<(u32, u64)>,
    /// Most strings each interning table holds; later new strings go inline.
    pub intern_cap: usize,
    /// Slices each track holds back to put them in start order.
    pub reorder_window: usize,
    /// Most lanes (the track and its overlap tracks) per track.
    pub max_lanes: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            sequence_id: 1,
            uuid_base: 0,
            realtime_now_ns: None,
            extra_clocks: Vec::new(),
            intern_cap: 1 << 16,
            reorder_window: 256,
            max_lanes: 16,
        }
    }
}

/// What a finished trace holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PftraceSummary {
    pub bytes: u64,
    pub packets: u64,
    pub slices: u64,
    pub instants: u64,
    pub counter_values: u64,
    /// Tracks declared (processes, threads, named and counter tracks).
    pub tracks: u64,
    /// Overlap tracks opened, and the slices placed on them.
    pub overlap_tracks: u64,
    pub overlap_slices: u64,
    /// Slices put on a track's last lane although they do not nest there
    /// (the lane limit was reached); Perfetto may draw them mis-nested.
    pub forced_slices: u64,
    /// Distinct interned names, categories, arg names, arg string values.
    pub interned: [u64; 4],
    /// Strings written inline because a table was full or the string long.
    pub inline_strings: u64,
}
