//! The hang record (`hang-N.json` in a dump directory): what a process's GPU work and
//! launching threads were doing at one moment, written when it stopped making
//! progress, when it was being killed, or on request. Times are Unix ns.

use serde::{Deserialize, Serialize};

/// The format this crate writes and reads.
pub const FORMAT: u32 = 1;

/// Why a record was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trigger {
    /// No kernel, copy or memset completed for `--hang-after`.
    NoProgress,
    /// SIGTERM or SIGABRT (a watchdog killing the job).
    Signal,
    /// `cupmon hang-dump` from another shell.
    OnDemand,
}

impl Trigger {
    pub fn word(self) -> &'static str {
        match self {
            Self::NoProgress => "no progress",
            Self::Signal => "signal",
            Self::OnDemand => "on demand",
        }
    }
}

/// One hang record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HangRecord {
    pub format: u32,
    pub trigger: Trigger,
    /// In words: "no GPU progress for 5m", "SIGTERM", "cupmon hang-dump".
    pub detail: String,
    pub written_ns: u64,
    pub pid: u32,
    pub rank: Option<i64>,
    /// The last progress: when the last completed kernel, copy or memset ended (when
    /// its buffer came back, for records on another client's clock); `None`: never.
    pub last_progress_ns: Option<u64>,
    /// The end of the last completed operation, as the GPU stamped it.
    pub last_completed_end_ns: Option<u64>,
    /// When any thread last launched a kernel; `None`: never (or not counted).
    pub last_launch_ns: Option<u64>,
    /// Per stream: the work in flight and the last completed operations.
    pub streams: Vec<StreamState>,
    /// Per launching thread: its last CUDA call and whether it is blocked.
    pub threads: Vec<ThreadState>,
    /// NCCL's streams (one per communicator and device as NCCL launches them).
    pub communicators: Vec<Communicator>,
    /// What the record could not see (launch tracking off, threads not tracked...).
    pub notes: Vec<String>,
}

/// A GPU operation from its activity record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Op {
    /// `kernel`, `memcpy` or `memset`.
    pub kind: String,
    /// The kernel's name as recorded (mangled), or the copy's direction.
    pub name: String,
    pub correlation_id: u32,
    /// `None`: CUPTI gave no time (queued at the forced flush).
    pub start_ns: Option<u64>,
    /// `None`: still running at the forced flush.
    pub end_ns: Option<u64>,
    /// When it was launched (the launch call, host clock), for an operation unfinished
    /// at the forced flush whose launch the thread's ring still holds. On the H200,
    /// CUPTI's forced flush gave a kernel spinning for seconds neither start nor end:
    /// the launch time is then the only time there is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<[i32; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<[i32; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// A launch the callbacks saw and no activity record has answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Launched {
    /// The kernel's name as CUPTI's callback gave it; `None`: not given.
    pub name: Option<String>,
    pub correlation_id: u32,
    pub launched_ns: u64,
    /// The launch call (`cudaLaunchKernel`, `cuLaunchKernelEx`, ...).
    pub api: String,
    pub tid: u64,
}

/// One stream (`stream: None`: launches whose stream cupmon could not tell).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamState {
    pub device: Option<u32>,
    pub context: Option<u32>,
    pub stream: Option<u32>,
    /// Started and not ended at the forced flush.
    pub running: Vec<Op>,
    /// Launched, with no record at all (not started, or the record not delivered).
    pub queued: Vec<Launched>,
    /// The last completed operations, oldest first.
    pub recent: Vec<Op>,
    /// Operations completed on this stream since the session began.
    pub completed: u64,
}

/// A call, and when (it entered, for a call still in progress; it returned otherwise).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub api: String,
    pub at_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadState {
    pub tid: u64,
    /// Launches it made (since it was first seen).
    pub launches: u64,
    /// Its last launch or synchronisation call.
    pub last_call: Option<Call>,
    /// The synchronisation it is in now (entered, not returned).
    pub blocked_in: Option<Call>,
}

/// An NCCL stream: the collectives launched and completed on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Communicator {
    pub device: u32,
    pub stream: u32,
    /// NCCL kernels completed on it since the session began.
    pub completed: u64,
    /// Started and not ended at the forced flush.
    pub running: Vec<Op>,
    /// Launched with no record (names from the launch callbacks).
    pub queued: Vec<Launched>,
    /// Its last completed NCCL kernels, oldest first.
    pub last_completed: Vec<Op>,
}
