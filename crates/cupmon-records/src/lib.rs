//! cupmon-records: CUPTI activity records without CUPTI.
//!
//! Pure byte parsing (no `unsafe`, no libcupti), so it builds, tests and fuzzes anywhere.
//!
//! # Records
//! - [`Layout`]: the struct sizes a CUPTI version writes (`Layout::for_api_version(130001)?`);
//!   one [`LayoutTable`] per range of versions with identical layouts (12.0 .. 13.5),
//!   field offsets in [`layout::fields`].
//! - [`RecordIter::new(buf, layout)`](RecordIter): zero-copy iterator over one activity
//!   buffer yielding `Result<Record, DecodeError>`; stops at the first unknown kind or
//!   truncated record (`record at offset 4096: unknown activity kind 77 for CUPTI 13.0`).
//! - [`RecordWriter::new(layout).push(&record)`](RecordWriter) and [`encode_record`]: the
//!   encoder (round trips, benchmarks, the fake libcupti).

mod bytes;
mod decode;
mod encode;
mod kind;
pub mod layout;
mod record;
mod version;

/// Runtime or driver: the domain of an [`ApiRecord`].
pub use cupmon_trace::ApiDomain;
pub use decode::{decode_record, DecodeError, RecordIter, WithOffsets};
pub use encode::{encode_record, encoded_size, BufferFull, RecordWriter};
pub use kind::ActivityKind;
pub use layout::{Layout, LayoutTable, StructLayout, UnsupportedVersion};
pub use record::{
    ApiRecord, CudaEventRecord, ExternalCorrelationRecord, KernelRecord, MemcpyRecord,
    MemsetRecord, OverheadRecord, Record, SyncRecord,
};
pub use version::CuptiVersion;

pub mod dump;
pub use dump::{
    BufferCompletion, Chunk, ChunkHeader, ChunkReader, ChunkWriter, Dump, DumpError, DumpWarning,
    DumpWriter, KernelNameTable, MetaFile, Truncation,
};

mod demangle;
pub use demangle::demangle;

mod stats;
mod walk;
mod window;
pub use stats::{dump_stats, DumpStats, KernelStat};
pub use walk::{
    decode_dump_to_window, decode_to_window, walk_records, DecodeProgress, DecodeReport,
};
pub use window::EventBuilder;
