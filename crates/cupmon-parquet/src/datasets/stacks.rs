//! `stacks/`: the Python stacks that launched the exported kernels, copies and memsets
//! (`cupmon_records::dump::python_stacks`), a row per frame. A frame a row rather than
//! a stack a row with a list of frames: DuckDB and Trino then filter, group and join
//! frames with plain SQL (`WHERE user_frame`, `GROUP BY file, line`), with no UNNEST
//! and no LIST/ARRAY(ROW) type that differs between the two, and the files stay
//! written by the same column encoders as every other dataset. A dump without stacks
//! writes no `stacks` file.

use crate::encode::{BoolCol, I64Col, OptStrCol, StrCol, Strings};
use crate::table::dataset;

dataset! {
    /// Frames of the Python stacks that launched exported GPU work.
    StackRows = "stacks", time = time_ns,
    "one row per frame of each Python stack that launched exported kernels, copies or memsets (innermost frame first); `stack_id` joins `kernels`, `memcpy` and `memset` rows of the same process (`host`, `pid`). A stack appears in each export whose rows name it: the `stacks` view folds repeats",
    {
        time_ns: I64Col [Plain] "the session start, Unix ns (0 when the meta lacks it), as in `dumps`: a process's stacks sit in its session's day=/hour=",
        stack_id: I64Col [Dict] "the stack, numbered per process: joins the `stack_id` of its kernels, copies and memsets (with `host` and `pid`)",
        frame: I64Col [Plain] "the frame's place in the stack, 0 the innermost (the call that launched)",
        file: StrCol [Dict] "the frame's source file, as Python named it",
        function: StrCol [Dict] "the frame's function",
        line: I64Col [Plain] "the frame's line",
        origin: OptStrCol [Dict] "`torch`, `triton` or `cupmon` for those libraries' frames; NULL for the user's code",
        user_frame: BoolCol [Plain] "the stack's innermost user frame (the innermost frame when all are libraries'): the one its rows' `source_line` names",
        truncated: BoolCol [Plain] "the stack's outer frames were left out (deeper than the walker goes)",
    }
}

/// One frame of a stack.
#[derive(Debug, Clone, Copy)]
pub struct StackFrameRow<'a> {
    pub time_ns: i64,
    pub stack_id: u32,
    pub frame: usize,
    pub file: &'a str,
    pub function: &'a str,
    pub line: i32,
    pub origin: Option<&'a str>,
    pub user_frame: bool,
    pub truncated: bool,
}

impl StackRows {
    pub fn push(&mut self, r: &StackFrameRow<'_>, strings: &mut Strings) {
        self.time_ns.push(r.time_ns);
        self.stack_id.push(i64::from(r.stack_id));
        self.frame.push(r.frame as i64);
        self.file.push(strings.intern(r.file));
        self.function.push(strings.intern(r.function));
        self.line.push(i64::from(r.line));
        self.origin.push(r.origin.map(|o| strings.intern(o)));
        self.user_frame.push(r.user_frame);
        self.truncated.push(r.truncated);
    }
}

impl crate::correlations::Correlate for StackRows {}
