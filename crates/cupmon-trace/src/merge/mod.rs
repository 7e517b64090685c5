//! The Kineto trace merge: PyTorch's `merge_trace_window_into_chrome_trace`,
//! streamed. Pass 1 reads the CPU trace for what the merge needs; pass 2
//! copies the kept CPU events' text into the output around the window's events.
//! Here: the merge's options, results and base time; `files.rs` runs it over a
//! CPU trace file, `merged.rs` writes the merged document.

mod args;
mod clock_align;
mod complete;
mod cpu_event;
mod cpu_scan;
mod entries;
mod extra_kinds;
mod files;
mod from_typed;
#[cfg(feature = "internals")]
pub mod internals;
mod lanes;
mod lookahead;
mod merged;
mod nccl_args;
mod off_clock;
mod param_comms;
mod span;
mod stream;
mod streamed;
mod survey;
mod untimed;
mod window_event;
pub(crate) mod window_input;
mod window_parse;

use std::path::Path;

use crate::{PftraceStats, TraceFormat};
pub use clock_align::ClockAlignment;
pub use files::{merge_files, merge_files_strict};
pub(crate) use files::{merge_source, name_output};
pub(crate) use merged::{write_merged, WindowPart};
pub use streamed::{DumpExport, DumpExportStats};
pub use untimed::UntimedGpuOps;
pub use window_input::MergeWindow;

/// Kineto rounds its trace base time down to this many seconds (~3 months).
pub const TRIMESTER_SECONDS: i128 = 7_889_238;

/// The default of [`MergeOptions::max_event_bytes`]: 1 GiB.
pub const DEFAULT_MAX_EVENT_BYTES: u64 = 1 << 30;

/// Options of a merge.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// `traceName` of the output; PyTorch's merge uses the output path when unset.
    pub trace_name: Option<String>,
    /// Exactly PyTorch's `merge_trace_window_into_chrome_trace`'s output; otherwise
    /// (the default) the complete trace: the same events and times with Kineto's
    /// names and args, overlap tracks and the kinds PyTorch's merge does not know.
    pub exact: bool,
    /// The largest JSON value the merge reads whole (a CPU-trace event, a
    /// window event, a top-level member such as `user_annotations`), as text
    /// and as parsed memory; a larger one is an error naming its file and
    /// offset. The CPU trace's top-level members other than `traceEvents`,
    /// kept for the output, may not exceed it together either. It bounds the
    /// merge's memory beyond what the window's events themselves take.
    /// Default [`DEFAULT_MAX_EVENT_BYTES`].
    pub max_event_bytes: u64,
    /// The output's format; `None`: by its name (`.pftrace`, `.pftrace.gz`:
    /// Perfetto protobuf, else Chrome JSON).
    pub format: Option<TraceFormat>,
}

impl Default for MergeOptions {
    fn default() -> Self {
        Self {
            trace_name: None,
            exact: false,
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            format: None,
        }
    }
}

/// What a merge did, for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeStats {
    pub cpu_events_kept: u64,
    pub cpu_events_replaced: u64,
    pub window_events: usize,
    /// Events of the trace as Chrome JSON writes it (a Perfetto trace holds
    /// the same, converted: see `pftrace`).
    pub events_written: u64,
    /// What the Perfetto trace holds, when the output is one.
    pub pftrace: Option<PftraceStats>,
    /// GPU ops without a time that the complete trace left out (none with `exact`).
    pub untimed_gpu_ops: UntimedGpuOps,
    /// The window's records were on torch.profiler's clock: how they were placed
    /// (with `exact`, not at all: `method` is `none`).
    pub clock_alignment: Option<ClockAlignment>,
}

/// Progress of a long merge, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum MergeProgress {
    /// Pass 1 has read this many (decompressed) bytes of the CPU trace.
    Scanned(u64),
}

/// PyTorch's merge's default base time: now, rounded down to a trimester.
pub fn default_base_ns() -> i128 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::from(d.as_secs()));
    trimester_floor_ns(now * 1_000_000_000)
}

/// Round a Unix time in ns down to Kineto's trimester boundary.
pub fn trimester_floor_ns(unix_ns: i128) -> i128 {
    let secs = unix_ns.div_euclid(1_000_000_000);
    secs.div_euclid(TRIMESTER_SECONDS) * TRIMESTER_SECONDS * 1_000_000_000
}

/// Where the merge gets its window: already in memory, or read from a file
/// while the CPU trace's first pass runs on another thread.
#[derive(Debug)]
pub enum WindowSource<'a> {
    Loaded(&'a MergeWindow),
    File(&'a Path),
}
