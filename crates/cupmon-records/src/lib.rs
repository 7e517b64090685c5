//! cupmon-records: CUPTI activity records and cupmon's raw dumps, without CUPTI.
//!
//! Pure byte parsing (no `unsafe`, no libcupti), so it builds, tests and fuzzes anywhere,
//! and never panics on damaged input.
//!
//! # Records
//! - [`Layout`]: the struct sizes a CUPTI version writes. `Layout::for_api_version(130001)?`
//!   (the `cuptiGetVersion` number a dump's meta stores), [`Layout::newest`],
//!   [`Layout::cupti_13_0`]. One [`LayoutTable`] per range of versions with identical
//!   layouts (12.0 to 13.5, measured on every CUPTI wheel by
//!   `tools/cupti-tables/gen_layouts.py`); field offsets in [`layout::fields`].
//! - [`RecordIter::new(buf, layout)`](RecordIter): zero-copy iterator over one activity
//!   buffer yielding `Result<Record, DecodeError>` by value; [`RecordIter::with_offsets`]
//!   adds each record's offset. It stops at the first unknown kind or truncated record
//!   (`record at offset 4096: unknown activity kind 77 for CUPTI 13.0`).
//! - [`Record`]: `Kernel`, `Memcpy`, `Memset`, `Api` (runtime/driver), `ExternalCorrelation`,
//!   `Overhead`, `CudaEvent`, `Synchronization`, each with every field of CUPTI's struct a
//!   user could want.
//! - [`RecordWriter::new(layout).push(&record)`](RecordWriter), [`encode_record`] (into a
//!   caller's buffer) and [`encoded_size`]: the encoder, for round trips, benchmarks and
//!   the fake libcupti.
//!
//! # Dumps ([`dump`])
//! - [`Dump::open(dir)`](Dump) reads `cupti_monitor_meta.bin` ([`MetaFile`]) and the
//!   optional side files ([`KernelNameTable`], user annotations); [`Dump::chunks`] streams
//!   `cupti_monitor_raw_buffers.bin` through a [`ChunkReader`] (one reused buffer; a
//!   truncated last chunk ends it with a [`Truncation`] to print, other damage is a
//!   [`DumpError`] naming file, chunk and byte).
//! - Writing: [`ChunkWriter`] (one chunk per completed buffer, for the monitor's worker),
//!   [`DumpWriter`] (a whole directory), [`MetaFile::write`], [`KernelNameTable::write`].
//!
//! # Windows and summaries
//! - [`decode_dump_to_window(dir, progress)`](decode_dump_to_window) ->
//!   `(TraceWindow, DecodeReport)`: every record in buffer order as the seed monitor's
//!   window events, kernel names resolved and demangled like `c++filt` ([`demangle`]),
//!   user annotations attached; the [`DecodeReport`] carries counts per kind and the
//!   [`DumpWarning`]s (truncation, skipped garbage) the caller must show.
//! - [`dump_stats(dir, top, progress)`](dump_stats) -> [`DumpStats`]: what `cupmon stats`
//!   prints (records per kind, chunks, time span, distinct and top kernels, drops).
//! - [`walk_records`] and [`EventBuilder`]: the same pieces for other consumers.

mod bytes;
mod decode;
mod demangle;
pub mod dump;
mod encode;
mod kind;
pub mod layout;
mod record;
mod stats;
mod version;
mod walk;
mod window;

/// Runtime or driver: the domain of an [`ApiRecord`].
pub use cupmon_trace::ApiDomain;
pub use decode::{decode_record, DecodeError, RecordIter, WithOffsets};
pub use demangle::demangle;
pub use dump::{
    BufferCompletion, Chunk, ChunkHeader, ChunkReader, ChunkWriter, Dump, DumpError, DumpWarning,
    DumpWriter, KernelNameTable, MetaFile, Truncation,
};
pub use encode::{encode_record, encoded_size, BufferFull, RecordWriter};
pub use kind::ActivityKind;
pub use layout::{Layout, LayoutTable, StructLayout, UnsupportedVersion};
pub use record::{
    ApiRecord, CudaEventRecord, ExternalCorrelationRecord, KernelRecord, MemcpyRecord,
    MemsetRecord, OverheadRecord, Record, SyncRecord,
};
pub use stats::{dump_stats, DumpStats, KernelStat};
pub use version::CuptiVersion;
pub use walk::{
    decode_dump_to_window, decode_to_window, walk_records, DecodeProgress, DecodeReport,
};
pub use window::EventBuilder;
