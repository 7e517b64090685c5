//! cupmon-report: `cupmon report`'s page. One self-contained HTML file (styles and a
//! small script inlined, no network at view time) of what the GPUs of one process or a
//! whole run did: the header (command, host, GPUs, CUPTI, span, records, dropped and
//! retired data), busy % over time per device and rank with kernels/s, copy bandwidth
//! and the trace windows on one time axis, the top kernels (count, total, mean,
//! p50/p99, share), copies, per-stream busy time, ranks side by side with the slowest
//! rank per minute (by time waiting in NCCL, and by compute with the kernels behind
//! it: cupmon-straggler), and a hint: the `cupmon decode` command for the slowest minute.
//!
//! The numbers come from `cupmon stats`' own code ([`cupmon_records::digest::summarize`]:
//! the segments' stored digests, the records where there are none), so the two agree
//! on every number they both show. The page holds bins, not events: its size follows
//! the number of bins ([`grid::MAX_BINS`] at most) and processes, not the records.
//!
//! - [`build_report`] reads the dumps ([`collect`] per dump, several at once) into a [`Report`];
//! - [`write_html`] writes the page.

mod collect;
pub use cupmon_records::digest::{copies, durations, streams};
pub mod grid;
mod html;
pub mod info;
mod model;
pub mod periods;
pub mod ranges;
pub mod stragglers;
pub mod windows;

use std::path::PathBuf;

pub use collect::{collect, label_of, ProcessData};
pub use grid::Grid;
pub use html::{iso_utc, write_html, KERNEL_NAME_CHARS};
pub use model::{build_report, run_span, Hint, KernelRow, Options, Report};

/// Why a report cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: {err}", dir.display())]
    Dump {
        dir: PathBuf,
        #[source]
        err: cupmon_records::DumpError,
    },
    #[error(transparent)]
    Timeline(#[from] cupmon_records::TimelineError),
    #[error("a bin of {bin_ns} ns over {span_ns} ns would make {bins} bins (a report holds at most {}): use a longer --bin", grid::MAX_BINS)]
    TooManyBins {
        bin_ns: u64,
        span_ns: u64,
        bins: u64,
    },
    #[error("a bin must be longer than 0")]
    ZeroBin,
    #[error(transparent)]
    Stragglers(#[from] cupmon_straggler::StragglerError),
    #[error("{0}: no dump to report on")]
    NoDumps(String),
}
