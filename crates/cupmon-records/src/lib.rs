//! cupmon-records: the ground floor. CUPTI's vocabulary (activity kinds, callback-id
//! names), the record layouts of every CUPTI version, a pure-Rust decoder of activity
//! buffers into typed records, and cupmon's raw dumps, all without CUPTI.
//!
//! Pure byte parsing (no `unsafe`, no libcupti), so it builds, tests and fuzzes anywhere
//! with a C++ runtime (kernel names are demangled by libstdc++'s `__cxa_demangle`, as
//! Kineto does, through cupmon-demangle), and never panics on damaged input.
//!
//! # Records
//! - [`kinds`]: one file per record family, each declared once with
//!   `activity_record!` (fields, the struct CUPTI writes per version range); [`Record`]
//!   is the enum over them, [`ActivityKind`] CUPTI's kind numbers.
//! - [`Layout`]: the struct sizes a CUPTI version writes. `Layout::for_api_version(130001)?`
//!   (the `cuptiGetVersion` number a dump's meta stores), [`Layout::newest`],
//!   [`Layout::cupti_13_0`]; measured on every CUPTI wheel by
//!   `tools/cupti-tables/gen_layouts.py`.
//! - [`RecordIter::new(buf, layout)`](RecordIter): zero-copy iterator over one activity
//!   buffer yielding `Result<Record, DecodeError>` by value; [`RecordIter::with_offsets`]
//!   adds each record's offset. It stops at the first unknown kind or truncated record
//!   (`record at offset 4096: unknown activity kind 77 for CUPTI 13.0`).
//! - [`RecordWriter::new(layout).push(&record)`](RecordWriter), [`encode_record`] (into a
//!   caller's buffer) and [`encoded_size`]: the encoder, for round trips, benchmarks and
//!   the fake libcupti.
//! - [`ApiDomain`]: runtime/driver callback-id names (the generated table).
//!
//! # Dumps ([`dump`])
//! - [`Dump::open(dir)`](Dump) reads `cupti_monitor_meta.bin` ([`MetaFile`]) and the
//!   optional side files ([`KernelNameTable`], user annotations; a cut last line is a
//!   warning); [`Dump::chunks`] streams `cupti_monitor_raw_buffers.bin` through a
//!   [`ChunkReader`] (one reused buffer; a truncated last chunk ends it with a
//!   [`Truncation`], a damaged header is skipped up to the next valid one and a zero
//!   tail reported, as [`DumpWarning`]s; what it cannot step over is a [`DumpError`]
//!   naming file, chunk and byte).
//! - Writing: [`ChunkWriter`] (one chunk per completed buffer, for the monitor's worker),
//!   [`DumpWriter`] (a whole directory), [`MetaFile::write`], [`KernelNameTable::write`].
//! - [`walk_records`]: every record of a dump in buffer order, with the damage rules;
//!   [`dump_stats`] -> [`DumpStats`]: what `cupmon stats` prints.
//! - Streaming: [`SliceWalk`] gives a dump's (or a slice's) records one buffer at a
//!   time, each [`Walked`] with its buffer's stamp; [`JoinWindow`] joins records by
//!   correlation id within a bounded [`Reorder`] window (memory flat in the dump's length).
//! - Slices: [`walk_slice`] with a [`TimeRange`]; [`Dump::time_span`] (first and last
//!   record, from the time index); [`Timeline::from_dump`]: busy %, kernels and copy
//!   bytes per time bin (`cupmon stats --timeline`, `cupmon report`).
//!
//! # NCCL ([`nccl`])
//! - [`nccl::NcclKernel::parse`]: the collective, type, reduction, algorithm and protocol
//!   an NCCL kernel's name gives, and which of them describe the launch.
//! - [`nccl::CollectiveShare`] -> [`nccl::CollectiveStats`]: per device, NCCL kernels'
//!   time against all kernels' ([`IntervalUnion`]s), and the collectives by time.

mod api_names;
pub mod clock;
mod cupti_enum;
mod decode;
mod demangle;
pub mod digest;
pub mod dump;
mod encode;
mod interval_union;
mod join_window;
pub mod kinds;
pub mod layout;
mod memory_words;
pub mod nccl;
mod ptr_map;
mod range_time;
mod slice_walk;
mod source_lines;
mod stats;
mod time_range;
pub mod timeline;
mod trace_format;
mod version;
mod walk;

pub use api_names::ApiDomain;
pub use clock::{ClockSamples, ForeignClock};
pub use cupti_enum::{ActivityKind, ExternalCorrelationKind};
pub use decode::{decode_record, DecodeError, RecordIter, WithOffsets};
pub use demangle::demangle;
pub use dump::{
    BufferCompletion, Chunk, ChunkHeader, ChunkReader, ChunkWriter, Dump, DumpError, DumpWarning,
    DumpWriter, KernelNameTable, KernelNames, MetaFile, Truncation,
};
pub use encode::{encode_record, encoded_size, BufferFull, RecordWriter};
pub use interval_union::IntervalUnion;
pub use join_window::{JoinWindow, Reorder, DEFAULT_MAX_PENDING, DEFAULT_REORDER_WINDOW_NS};
pub use kinds::{
    ActivityRecord, ApiRecord, CudaEventRecord, ExternalCorrelationRecord, KernelRecord,
    MemcpyRecord, MemoryPoolRecord, MemoryRecord, MemsetRecord, OverheadRecord, Record, SyncRecord,
};
pub use layout::{Layout, UnsupportedVersion};
pub use memory_words::{copy_kind_word, memory_kind_title, memory_kind_word};
pub use ptr_map::{PtrHasher, PtrMap};
pub use range_time::{gpu_time_by_annotation, merge_range_times, RangeTime, RangeTimes};
pub use slice_walk::SliceWalk;
pub use source_lines::{source_lines, LinesReport, SourceLine, Unclaimed};
pub use stats::{dump_stats, dump_stats_slice, stats_of, DumpStats, KernelStat, GPU_BUSY};
pub use time_range::TimeRange;
pub use timeline::{Timeline, TimelineBin, TimelineBuilder, TimelineError};
pub use trace_format::{is_pftrace_path, TraceFormat};
pub use version::CuptiVersion;
pub use walk::{
    walk_records, walk_slice, walk_slice_apart, DecodeProgress, DecodeReport, Walked, WalkedRef,
    META_NOT_UPDATED,
};
