//! How a merge placed a window's records on the CPU trace's clock, as the window's
//! `cupmon` key records it (the merge that finds it is `cupmon-trace`'s).

/// What the window's clock needed, for the caller to say and the trace to record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClockAlignment {
    /// `shift`: converted times moved by `shift_ns`; `line`: times on another clock
    /// placed with the line below; `none`: on another clock and nothing to place
    /// them with (they stay where they are, far from the CPU ops).
    pub method: &'static str,
    /// Records whose times are on another clock than Unix ns (`line`, `none`).
    pub foreign_records: u64,
    /// ns added to every time (`shift`), or the offset at the first linked call.
    pub shift_ns: i64,
    /// The line's rate (`line`): ns per tick, in parts per billion (2.1 GHz: 476190476).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_per_tick_ppb: Option<i64>,
    /// CUDA calls linked to a CPU op of the trace (by External id).
    pub linked_calls: u64,
    /// Of those, outside their op before and after.
    pub outside_before: u64,
    pub outside_after: u64,
    /// `line`: the time on the other clock where `shift_ns` holds (the merge's
    /// own bookkeeping, not written).
    #[serde(skip)]
    #[doc(hidden)]
    pub anchor: i128,
}
