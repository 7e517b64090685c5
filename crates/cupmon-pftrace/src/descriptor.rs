//! `TrackDescriptor`s: the tracks a trace's events sit on. Processes and
//! threads carry Perfetto's Process/ThreadDescriptor (pid, tid, names, the
//! Chrome trace's sort index); other tracks are named children of a parent.

use crate::fields::{counter as c, process as p, thread as t, track_descriptor as d};
use crate::wire;

/// Sort order of processes and threads as the Chrome trace's
/// `process_sort_index` / `thread_sort_index` give it: the root descriptor
/// (uuid 0) asks for explicit ordering, each track's `sibling_order_rank`
/// gives it, and `legacy_sort_index` repeats it for older viewers.
pub(crate) fn root(buf: &mut Vec<u8>) {
    let at = wire::begin(buf, crate::fields::packet::TRACK_DESCRIPTOR);
    wire::uint(buf, d::UUID, 0);
    wire::uint(buf, d::PROCESS_ORDERING, d::PROCESS_ORDERING_EXPLICIT);
    wire::uint(buf, d::THREAD_ORDERING, d::THREAD_ORDERING_EXPLICIT);
    wire::end(buf, at);
}

pub(crate) fn process(
    buf: &mut Vec<u8>,
    uuid: u64,
    pid: i32,
    name: &str,
    labels: &[&str],
    sort_index: i32,
) {
    let at = wire::begin(buf, crate::fields::packet::TRACK_DESCRIPTOR);
    wire::uint(buf, d::UUID, uuid);
    wire::int(buf, d::SIBLING_ORDER_RANK, i64::from(sort_index));
    let pd = wire::begin(buf, d::PROCESS);
    wire::int(buf, p::PID, i64::from(pid));
    // No name: Perfetto shows "Process <pid>", as for a JSON trace without one.
    if !name.is_empty() {
        wire::bytes(buf, p::PROCESS_NAME, name.as_bytes());
    }
    wire::int(buf, p::LEGACY_SORT_INDEX, i64::from(sort_index));
    for label in labels {
        wire::bytes(buf, p::PROCESS_LABELS, label.as_bytes());
    }
    wire::end(buf, pd);
    wire::end(buf, at);
}

pub(crate) fn thread(buf: &mut Vec<u8>, uuid: u64, pid: i32, tid: i64, name: &str, sort: i32) {
    let at = wire::begin(buf, crate::fields::packet::TRACK_DESCRIPTOR);
    wire::uint(buf, d::UUID, uuid);
    wire::int(buf, d::SIBLING_ORDER_RANK, i64::from(sort));
    let td = wire::begin(buf, d::THREAD);
    wire::int(buf, t::PID, i64::from(pid));
    wire::int(buf, t::TID, tid);
    if !name.is_empty() {
        wire::bytes(buf, t::THREAD_NAME, name.as_bytes());
    }
    wire::int(buf, t::LEGACY_SORT_INDEX, i64::from(sort));
    wire::end(buf, td);
    wire::end(buf, at);
}

/// A named track; under a thread or process track Perfetto shows it as that
/// track's sibling in the same process. Never merged with same-named
/// siblings: an overlap lane must stay its own row.
pub(crate) fn named(buf: &mut Vec<u8>, uuid: u64, parent: Option<u64>, name: &str, sort: i32) {
    let at = wire::begin(buf, crate::fields::packet::TRACK_DESCRIPTOR);
    wire::uint(buf, d::UUID, uuid);
    if let Some(parent) = parent {
        wire::uint(buf, d::PARENT_UUID, parent);
    }
    wire::bytes(buf, d::NAME, name.as_bytes());
    wire::int(buf, d::SIBLING_ORDER_RANK, i64::from(sort));
    wire::uint(
        buf,
        d::SIBLING_MERGE_BEHAVIOR,
        d::SIBLING_MERGE_BEHAVIOR_NONE,
    );
    wire::end(buf, at);
}

/// The unit of a counter track's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterUnit<'a> {
    Unspecified,
    TimeNs,
    Count,
    SizeBytes,
    /// Any other unit, shown by name.
    Named(&'a str),
}

pub(crate) fn counter(
    buf: &mut Vec<u8>,
    uuid: u64,
    parent: Option<u64>,
    name: &str,
    unit: CounterUnit<'_>,
) {
    let at = wire::begin(buf, crate::fields::packet::TRACK_DESCRIPTOR);
    wire::uint(buf, d::UUID, uuid);
    if let Some(parent) = parent {
        wire::uint(buf, d::PARENT_UUID, parent);
    }
    wire::bytes(buf, d::NAME, name.as_bytes());
    let cd = wire::begin(buf, d::COUNTER);
    match unit {
        CounterUnit::Unspecified => {}
        CounterUnit::TimeNs => wire::uint(buf, c::UNIT, c::UNIT_TIME_NS),
        CounterUnit::Count => wire::uint(buf, c::UNIT, c::UNIT_COUNT),
        CounterUnit::SizeBytes => wire::uint(buf, c::UNIT, c::UNIT_SIZE_BYTES),
        CounterUnit::Named(u) => wire::bytes(buf, c::UNIT_NAME, u.as_bytes()),
    }
    wire::end(buf, cd);
    wire::end(buf, at);
}
