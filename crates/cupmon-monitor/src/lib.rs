//! cupmon's live monitor. Always on: every kernel, copy and memset goes from
//! CUPTI's buffers to a raw dump, through a pool of buffers allocated ahead
//! (CUPTI's request callback is a pop, or one mmap when none is ready) and a
//! worker thread (the completion callback only queues). On request: trace
//! windows that add CPU-side API records and correlation, and named user
//! annotations.
//!
//! ```no_run
//! use cupmon_monitor::{Monitor, MonitorConfig};
//! let monitor = Monitor::start(MonitorConfig::new("cupmon-out/1234"))?;
//! monitor.start_window()?;
//! // ... the program runs ...
//! let window = monitor.end_window()?;
//! let (stats, _) = monitor.stop()?;
//! # Ok::<(), cupmon_monitor::MonitorError>(())
//! ```

mod clock_log;
mod cupti_settings;
mod dump_layout;
mod error;
mod flush_caller;
mod flusher;
mod hang_watch;
mod launch_ledger;
mod launch_stacks;
mod loss_ranges;
mod meta;
mod monitor;
mod msg;
mod pool;
mod shared;
mod stall_watch;
mod stats;
mod window_filters;
mod worker;
mod worker_profile;

pub use cupmon_config::{env_vars, ConfigError, MonitorConfig, DEFAULT_KINDS, WINDOW_KINDS};
pub use cupmon_hang::Trigger as HangTrigger;
pub use error::{MonitorError, StateError};
pub use flusher::SLOW_FLUSH_PERIODS;
pub use meta::MetaEntry;
pub use monitor::{range_clock_ns, Monitor, RangeAttributes, RangeCategory, RangeStart};
pub use stats::{BufferUse, MonitorStats, QuietStretch};
pub use worker_profile::WorkerProfile;

/// Sees each completed activity buffer on the worker thread, after it is
/// written to the dump and before it is reused.
pub trait BufferObserver: Send + Sync {
    fn on_buffer(&self, records: &[u8], cupti_version: u32);
}
