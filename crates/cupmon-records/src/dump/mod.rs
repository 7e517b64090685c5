//! The raw dump directory: PyTorch's CUPTI-monitor dump (`cupti_monitor_meta.bin`,
//! `cupti_monitor_raw_buffers.bin`) plus cupmon's side files (`kernel_names.tsv`,
//! `user_annotations.jsonl` with its index `user_annotations.jsonl.idx`, and
//! `user_annotations.json` of older dumps), which readers treat as optional.

mod annotation_index;
mod annotation_index_writer;
mod annotation_log;
mod annotations;
mod buffers;
mod chunk;
mod chunk_headers;
mod chunk_reader;
mod chunk_resync;
mod chunk_writer;
pub mod compact;
mod cpu_annotation_file;
mod dir;
mod dump_annotations;
mod dump_file;
mod error;
mod frame;
mod kernel_name_resolver;
mod kernel_names;
mod launch_account;
mod launch_stacks;
mod meta;
mod python_stacks;
mod python_stacks_writer;
mod rank;
mod seal;
mod segment;
mod segment_audit;
mod segment_damage;
mod segment_verify;
mod segment_writer;
mod side_lines;
mod status;
mod time_span;
mod warning;
mod writer;

pub use annotation_log::{
    annotation_line, parse_annotation_log, read_annotation_log, AnnotationLog,
};
pub use annotations::{
    parse_user_annotations, read_dump_annotations, read_user_annotations, user_annotations_bytes,
    write_user_annotations,
};
pub use buffers::{Buffer, BufferBody, BufferReader};
pub use chunk::{
    BufferCompletion, Chunk, ChunkHeader, CHUNK_HEADER_LEN, CHUNK_MAGIC, CHUNK_VERSION,
    CHUNK_VERSION_FRAME, CHUNK_VERSION_SEALED,
};
pub use chunk_headers::chunk_headers;
pub use chunk_reader::ChunkReader;
pub use chunk_writer::ChunkWriter;
pub use compact::{
    compress_chunk, decompress_chunk, ChunkCompressor, ChunkDecompressor, CompactError,
};
pub use cpu_annotation_file::{
    append_cpu_annotation_lines, read_cpu_annotation_lines, CPU_ANNOTATIONS_CAP,
};
pub use dir::Dump;
pub use dump_file::{
    ANNOTATION_INDEX_CAP, DIGEST_CAP, KERNEL_NAMES_CAP, META_CAP, SEGMENT_INDEX_CAP, STATUS_CAP,
    USER_ANNOTATIONS_CAP,
};
pub use error::{DumpError, Magic};
pub use frame::{FrameIndex, TimeSpan, FRAME_INDEX_LEN};
pub use kernel_name_resolver::KernelNames;
pub use kernel_names::{write_line as write_kernel_name_line, KernelNameTable};
pub use launch_account::{
    Counted, DeliveryGap, KernelAccount, LaunchLedger, LossRange, Recovery, LAUNCHES_KEY,
    MAX_LISTED_RECOVERIES, NOT_COUNTED_OLD,
};
pub use launch_stacks::{
    launch_entries, launch_stacks_file_name, launch_stacks_header, parse_launch_stacks_file_name,
    LAUNCH_STACKS_CAP, LAUNCH_STACKS_FILE,
};
pub use meta::{
    MetaFile, DISK_FULL_SUFFIX, META_HEADER_LEN, META_MAGIC, META_TMP_SUFFIX, META_VERSION,
};
pub use python_stacks::{
    LaunchStack, StackFrame, StackLine, StackTable, BACKWARD_OF, NO_PYTHON_STACK,
    PYTHON_STACKS_FILE,
};
pub use python_stacks_writer::StackFilesWriter;
pub use rank::{pid_in_dir_name, rank_in_dir_name};
pub(crate) use seal::{checksum, checksum_hex};
pub use seal::{DumpId, FrameSeal, SEAL_LEN};
pub use segment::{
    list_segments, parse_index_line, parse_segment_file_name, segment_file_name, IndexLine,
    RetireReason, Retired, SegmentFile, SegmentList, SegmentSummary, SEGMENTS_DIR,
    SEGMENT_INDEX_FILE,
};
pub use segment_verify::segment_frames_problem;
pub use segment_writer::{LaunchProbe, SegmentPolicy, SegmentStats, SegmentWriter};
pub use status::{read_refusal, write_refusal, Refusal};
pub use warning::{
    ChunkDamage, DumpWarning, IndexSays, SegmentLoss, SkippedBytes, Truncation, ZeroTail,
    SESSION_OPEN,
};
pub use writer::{BufferWritten, DumpWriter};

/// Session description (CUPMMETA v2).
pub const META_FILE: &str = "cupti_monitor_meta.bin";
/// The activity buffers (CUPMRBUF v2 chunks).
pub const RAW_BUFFERS_FILE: &str = "cupti_monitor_raw_buffers.bin";
/// Kernel-name pointer -> mangled name.
pub const KERNEL_NAMES_FILE: &str = "kernel_names.tsv";
/// Why the injection library did not monitor a process.
pub const STATUS_FILE: &str = "cupmon_status.json";
/// External id -> annotation name, rewritten whole (older cupmon dumps; still read).
pub const USER_ANNOTATIONS_FILE: &str = "user_annotations.json";
/// External id -> annotation name, a line appended per annotation (what cupmon writes).
pub const USER_ANNOTATIONS_LOG_FILE: &str = "user_annotations.jsonl";
/// NVTX ranges and marks of the trace windows, a JSON line each (`cpu_annotation_file.rs`).
pub const CPU_ANNOTATIONS_FILE: &str = "cpu_annotations.jsonl";
/// Sparse index of `user_annotations.jsonl` (byte range and id range per block of
/// lines), so a slice reads only the lines it needs.
pub const USER_ANNOTATIONS_INDEX_FILE: &str = "user_annotations.jsonl.idx";
