//! cupmon's one FFI crate for CUPTI: finds and loads libcupti at run time, checks
//! that the NVIDIA driver is present first, and wraps the CUPTI calls cupmon makes
//! in safe functions returning `Result`. CUPTI's buffer callbacks become an
//! [`ActivitySink`] trait, so the monitor owns and receives buffers without
//! `unsafe`.
//!
//! ```no_run
//! use cupmon_cupti::{ActivityKind, Cupti};
//! let cupti = Cupti::load()?;
//! println!("CUPTI {} from {}", cupti.version(), cupti.path().display());
//! cupti.enable(ActivityKind::CONCURRENT_KERNEL)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![allow(unsafe_code)]

mod activity_settings;
mod buffer;
mod callbacks;
mod clock;
mod constants;
mod cupti;
mod device;
pub mod env_vars;
mod error;
mod interest;
mod kernel_names;
pub mod launches;
mod load;
mod locate;
pub mod raw;

pub use buffer::{ActivityBuffer, CompletedBuffer};
pub use callbacks::{callback_stats, ActivitySink, CallbackStats};
pub use clock::monotonic_ns;
pub use constants::{ActivityKind, CuptiStatus, ExternalCorrelationKind, FlushFlag, ThreadIdType};
pub use cupti::Cupti;
pub use device::{device_properties, DeviceProperties};
pub use error::{CuptiError, LoadError, Tried};
pub use interest::Owner;
pub use launches::{
    all_node_stacks, launch_counting, launch_counts, launch_stack, leave_callback_slot,
    python_stack_timing, python_stacks_noted, start_python_stacks, stop_python_stacks,
    take_new_node_stacks, Counting, LaunchCounts, StackTiming,
};
pub use load::{find_driver, LoadOptions};
pub use locate::SearchOptions;
