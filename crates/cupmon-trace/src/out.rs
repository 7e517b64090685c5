//! The output side of a trace, independent of its format: what the writers of the
//! kinds PyTorch's merge does not know (memory, memory pools) emit. Times are Unix ns
//! on the record's clock; each format converts (Chrome JSON: µs from its base time).

/// A value of an event's arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg<'a> {
    Int(i128),
    Float(f64),
    Str(&'a str),
}

/// Where trace events go.
pub trait TraceOut {
    /// A thread-scoped instant event on `(pid, tid)`.
    fn instant(
        &mut self,
        pid: i128,
        tid: i128,
        ts_ns: i128,
        name: &str,
        cat: &str,
        args: &[(&str, Arg<'_>)],
    );

    /// A sample of the counter `name` of process `pid` (one series per value).
    fn counter(&mut self, pid: i128, ts_ns: i128, name: &str, values: &[(&str, f64)]);
}
