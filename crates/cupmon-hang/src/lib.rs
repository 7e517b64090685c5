//! Hang records and the diagnosis across ranks.
//!
//! - `record`: the hang record's format (`hang-N.json` in a dump directory).
//! - `file`: writing one (temporary file, rename) and reading them back.
//! - `tracker`: what the monitor's worker keeps per stream for the record.
//! - `assemble`: a record from the tracker's streams and the launching threads.
//! - `diagnose`: every rank's dump and records read into a verdict a person can act
//!   on: the culprit rank(s), what each is stuck in, where collective sequences
//!   diverge, and the evidence.

mod assemble;
pub mod diagnose;
mod error;
mod file;
mod record;
mod tracker;

pub use assemble::{assemble, HostLaunch, HostThread, Snapshot};
pub use error::HangError;
pub use file::{
    hang_record_paths, read_hang_record, read_hang_records, write_hang_record, HANG_RECORD_CAP,
    MAX_RECORDS,
};
pub use record::{
    Call, Communicator, HangRecord, Launched, Op, StreamState, ThreadState, Trigger, FORMAT,
};
pub use tracker::{StreamTracker, StreamView, RECENT};
