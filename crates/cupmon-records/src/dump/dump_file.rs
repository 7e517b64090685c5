//! Every file of a dump is read by cupmon-files' rule (not through a planted link,
//! without waiting on a FIFO, a regular file only, within a cap): the caps, one per
//! file, tied to what that file can legitimately hold; and what a refused file becomes.
//! A dump directory may sit in a run directory other jobs can write, and a crash or a
//! full disk leaves files no writer meant.

use std::path::Path;

use cupmon_files::{FileError, GIB, KIB, MIB};

use super::error::DumpError;
use super::warning::DumpWarning;

/// `cupti_monitor_meta.bin`: a JSON object of a few dozen keys, the GPUs' properties
/// and at most 512 clock samples (~30 KiB); PyTorch's monitor writes less.
pub const META_CAP: u64 = 16 * MIB;
/// `kernel_names.tsv`: a line per distinct kernel-name pointer. A large PyTorch job
/// has tens of thousands of kernels, and a templated name a few KiB.
pub const KERNEL_NAMES_CAP: u64 = GIB;
/// `user_annotations.jsonl` (and the old `.json`): a line per annotation id; a day of
/// one annotation per step is ~170,000 lines of ~40 bytes.
pub const USER_ANNOTATIONS_CAP: u64 = GIB;
/// `user_annotations.jsonl.idx`: a line of at most 105 bytes per block of 512 log
/// lines or 64 KiB of log, so ~6 MiB for a log at its cap.
pub const ANNOTATION_INDEX_CAP: u64 = 64 * MIB;
/// `segments/index.jsonl`: two lines per segment (closed, retired), each a summary with
/// at most the clock samples of its buffers (~45 bytes each).
pub const SEGMENT_INDEX_CAP: u64 = 256 * MIB;
/// `seg-NNNNNN.digest`: a segment's numbers; its largest parts (launches per name
/// pointer, one-second bins) grow with the kernels and seconds of one segment.
pub const DIGEST_CAP: u64 = 256 * MIB;
/// `cupmon_status.json`: one reason in a sentence.
pub const STATUS_CAP: u64 = 64 * KIB;

/// The bytes of `path` (named `file` in messages) if it is there and may be read;
/// `None` when it is missing, or refused: then a warning naming it, what it is and
/// `lost` (what the output lacks without it) goes to `warnings`.
pub(crate) fn read_side_file(
    path: &Path,
    file: &str,
    cap: u64,
    lost: &str,
    warnings: &mut Vec<DumpWarning>,
) -> Option<Vec<u8>> {
    match cupmon_files::read_capped_if_present(path, cap) {
        Ok(bytes) => bytes,
        Err(e) => {
            warnings.push(refused(file, &e, lost));
            None
        }
    }
}

/// The warning for a refused file.
pub(crate) fn refused(file: &str, e: &FileError, lost: &str) -> DumpWarning {
    DumpWarning::Unreadable {
        file: file.to_owned(),
        problem: e.problem(),
        lost: lost.to_owned(),
    }
}

/// The error for a refused file the dump cannot be read without (the meta).
pub(crate) fn refused_error(file: &str, e: FileError) -> DumpError {
    match e {
        FileError::Io { source, .. } => DumpError::io(file, source),
        other => DumpError::Refused {
            file: file.to_owned(),
            problem: other.problem(),
        },
    }
}
