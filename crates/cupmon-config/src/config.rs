//! [`MonitorConfig`]: every setting of a monitoring session, in one plain struct.
//! Values enter only through [`MonitorConfig::set`] (the table's parsers) and are
//! checked together by [`MonitorConfig::validate`].

use std::path::PathBuf;
use std::time::Duration;

use cupmon_log::Level;
use cupmon_records::{ActivityKind, TraceFormat};

/// Frames kept of a Python stack at most: `cupmon_pystack::MAX_DEPTH`, the walker's
/// buffer (a test in cupmon-monitor holds the two equal; this crate does not depend on
/// the walker).
pub const MAX_PYTHON_STACK_DEPTH: u32 = 96;

/// Settings of one monitoring session (of one process).
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorConfig {
    /// Where the dumps go (one subdirectory per process).
    pub output_dir: PathBuf,
    /// This process's dump directory (created if needed). The injection library
    /// derives it from `output_dir`, the rank and the pid.
    pub dump_dir: PathBuf,
    /// Always-on kinds.
    pub kinds: Vec<ActivityKind>,
    /// Size of each buffer lent to CUPTI.
    pub buffer_size: u64,
    /// Most buffer memory in existence (lent, queued or free); past it CUPTI gets no
    /// buffer and drops records, which are counted.
    pub max_outstanding_bytes: u64,
    /// Buffers kept ready in the free list, so a request is a pop.
    pub free_buffers: usize,
    /// Period of the flush that keeps the dump about this far behind.
    pub flush_period: Duration,
    /// One trace window this long after the start, for `window_for`.
    pub window_at: Option<Duration>,
    pub window_for: Option<Duration>,
    /// SIGUSR2 toggles a trace window.
    pub window_on_signal: bool,
    /// How much cupmon says on stderr.
    pub log: Level,
    /// The libcupti to load instead of searching for one.
    pub libcupti: Option<PathBuf>,
    /// `false`: do not monitor this process (`CUPMON_ENABLE=0`).
    pub enable: bool,
    /// Disk budget of the dump; `None`: [`crate::default_keep`] of the free space.
    pub keep: Option<u64>,
    /// Retire segments whose records all ended longer ago than this.
    pub keep_for: Option<Duration>,
    /// Roll to a new segment file past this many bytes...
    pub segment_size: u64,
    /// ...or this long after the segment started.
    pub segment_period: Duration,
    /// Write PyTorch's single uncompressed raw-buffer file instead of segments.
    pub raw: bool,
    /// The format of each window's trace file.
    pub trace_format: TraceFormat,
    /// Count kernel launches through CUPTI's callbacks (launch accounting).
    pub count_launches: bool,
    /// Note each launch's Python stack (needs `count_launches`).
    pub python_stacks: bool,
    /// Frames kept of each stack, innermost first (at most `cupmon_pystack::MAX_DEPTH`).
    pub python_stack_depth: u32,
    /// Time each stack read (for measuring what stacks cost; the meta says).
    pub python_stack_timing: bool,
    /// Act when CUPTI delivers nothing while kernels are launched.
    pub recover: bool,
    /// A stall: this many flush periods without a buffer back...
    pub stall_periods: u32,
    /// ...while at least this many kernels were launched.
    pub stall_kernels: u64,
    /// Call the periodic flush even while the previous one runs.
    pub flush_overlap: bool,
    /// CUPTI's own settings (`None`: CUPTI's defaults).
    pub cupti_flush_period: Option<Duration>,
    pub cupti_device_buffer_size: Option<u64>,
    pub cupti_device_buffer_pool_limit: Option<u64>,
    /// `cupmon run`'s metrics: the HTTP address to serve them on, the textfile to
    /// write them to, and how often they are computed.
    pub metrics_port: Option<std::net::SocketAddrV4>,
    pub metrics_file: Option<PathBuf>,
    pub metrics_interval: Duration,
    /// Write a hang record after this long without GPU progress (`None`: off).
    pub hang_after: Option<Duration>,
}

/// Kernels, copies and memsets: the always-on set.
pub const DEFAULT_KINDS: [ActivityKind; 3] = [
    ActivityKind::CONCURRENT_KERNEL,
    ActivityKind::MEMCPY,
    ActivityKind::MEMSET,
];

/// Kinds a trace window adds, in an order that satisfies their dependencies
/// (external correlation needs runtime; CUDA events need synchronization).
pub const WINDOW_KINDS: [ActivityKind; 6] = [
    ActivityKind::RUNTIME,
    ActivityKind::DRIVER,
    ActivityKind::EXTERNAL_CORRELATION,
    ActivityKind::OVERHEAD,
    ActivityKind::SYNCHRONIZATION,
    ActivityKind::CUDA_EVENT,
];

impl MonitorConfig {
    /// The defaults (the table's), with `dump_dir` as this process's dump directory.
    pub fn new(dump_dir: impl Into<PathBuf>) -> Self {
        Self {
            output_dir: PathBuf::from("cupmon-out"),
            dump_dir: dump_dir.into(),
            kinds: DEFAULT_KINDS.to_vec(),
            buffer_size: 4 << 20,
            // With CUPTI 13.0 on the H200, 23-25 buffers were out at once (lent to
            // CUPTI or queued for the worker) at 1.2-1.5 M kernels/s: a 64 MiB cap
            // (16 buffers) lost a third of a 10 s burst. Only what is out and the
            // ready reserve are allocated; the rest of the cap costs nothing.
            // At 1.35 M kernels/s on the H200 the buffers in use peaked at 516 MiB; at a
            // 256 MiB cap CUPTI was refused buffers and then stopped delivering for good
            // (bench/recorder/RESULTS.md). Memory follows use: idle, 32-64 MiB.
            max_outstanding_bytes: 2 << 30,
            // 8 x 4 MiB ready: a request is a pop while the worker refills.
            free_buffers: 8,
            flush_period: Duration::from_secs(1),
            window_at: None,
            window_for: None,
            window_on_signal: false,
            log: Level::Warn,
            libcupti: None,
            enable: true,
            keep: None,
            keep_for: None,
            segment_size: 64 << 20,
            segment_period: Duration::from_secs(600),
            raw: false,
            trace_format: TraceFormat::Json,
            count_launches: true,
            python_stacks: true,
            python_stack_depth: MAX_PYTHON_STACK_DEPTH,
            python_stack_timing: false,
            recover: true,
            stall_periods: 3,
            stall_kernels: 20_000,
            flush_overlap: false,
            cupti_flush_period: None,
            cupti_device_buffer_size: None,
            cupti_device_buffer_pool_limit: None,
            metrics_port: None,
            metrics_file: None,
            metrics_interval: Duration::from_secs(15),
            hang_after: Some(Duration::from_secs(300)),
        }
    }

    /// How many buffers fit under the cap.
    pub fn max_buffers(&self) -> usize {
        (self.max_outstanding_bytes / self.buffer_size.max(1)) as usize
    }
}
