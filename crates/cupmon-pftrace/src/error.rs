//! Errors of the Perfetto trace writer; each names the event and the value.

#[derive(Debug, thiserror::Error)]
pub enum PftraceError {
    #[error("writing the Perfetto trace: {0}")]
    Write(#[from] std::io::Error),
    #[error("slice {name:?}: start {ts_ns} ns + duration {dur_ns} ns overflows 64 bits")]
    EndOverflow {
        name: String,
        ts_ns: u64,
        dur_ns: u64,
    },
    #[error("event {name:?}: flow id 0 (Perfetto reads 0 as no flow; use the correlation id)")]
    ZeroFlowId { name: String },
    #[error("{what} {index} was not made by this writer (it has {count})")]
    UnknownTrack {
        what: &'static str,
        index: u32,
        count: usize,
    },
    #[error("trusted_packet_sequence_id 0 is reserved by Perfetto; use 1 or more")]
    ZeroSequenceId,
}
