//! The messages of the monitor to its worker thread.

use std::sync::mpsc::SyncSender;

use cupmon_cupti::CompletedBuffer;
use cupmon_window::WindowEvent;

/// Work for the worker, in arrival order.
pub(crate) enum Msg {
    Buffer {
        buffer: CompletedBuffer,
        cupti_ns: u64,
        unix_ns: u64,
    },
    /// The free list is running low.
    Refill,
    /// Answered once everything sent before it is done.
    Barrier(SyncSender<()>),
    /// Start keeping records for a trace window.
    WindowStart,
    /// Stop keeping records; answer with them as window events.
    WindowEnd(SyncSender<WindowEvents>),
    /// Write a hang record (after a forced flush); answer with its path.
    HangRecord {
        trigger: cupmon_hang::Trigger,
        detail: String,
        reply: SyncSender<Result<std::path::PathBuf, String>>,
    },
    /// Flush and close the dump; answer with the first write error, if any.
    Stop(SyncSender<Option<String>>),
}

/// A window's events, with what happened to records of another clock.
#[derive(Debug, Default)]
pub(crate) struct WindowEvents {
    pub events: Vec<WindowEvent>,
    /// Records of another client's clock converted to Unix ns.
    pub converted: u64,
    /// Records of another clock left out (too few samples to convert them).
    pub off_clock: u64,
}
