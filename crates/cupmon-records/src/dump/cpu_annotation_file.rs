//! `cpu_annotations.jsonl`: the NVTX ranges and marks of a recording's trace windows,
//! a JSON object per line (`cupmon_window::CpuAnnotation`, which this crate does not
//! know: lines are written and read as text, the reader's caller parsing each), so
//! that a trace made from the dump later draws them on their CPU threads as the
//! window's own trace did.
//!
//! The monitor appends a window's lines when the window ends, in one `write`, and
//! nothing outside windows: a kill can cut only the last line, which the reader skips
//! with a warning (`side_lines.rs`).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use super::dump_file::read_side_file;
use super::error::DumpError;
use super::side_lines::parse_lines;
use super::warning::DumpWarning;
use super::CPU_ANNOTATIONS_FILE;

/// `cpu_annotations.jsonl`: a line per range or mark kept by a window; a window keeps
/// at most ~1M of ~250 bytes.
pub const CPU_ANNOTATIONS_CAP: u64 = cupmon_files::GIB;

/// Append `lines` (whole lines, each ending in a newline) to the dump `dir`'s
/// `cpu_annotations.jsonl`, in one write.
pub fn append_cpu_annotation_lines(dir: &Path, lines: &[u8]) -> Result<(), DumpError> {
    if lines.is_empty() {
        return Ok(());
    }
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join(CPU_ANNOTATIONS_FILE))
        .and_then(|mut f| f.write_all(lines))
        .map_err(|e| DumpError::io(CPU_ANNOTATIONS_FILE, e))
}

/// Hand each line of the dump `dir`'s `cpu_annotations.jsonl` to `entry` (which says
/// what is wrong with a line it cannot read). A missing file is none; a refused one,
/// bad lines and a cut last line come back as warnings.
pub fn read_cpu_annotation_lines(
    dir: &Path,
    entry: impl FnMut(&str) -> Result<(), String>,
) -> Vec<DumpWarning> {
    let mut warnings = Vec::new();
    let lost = "NVTX ranges and marks are not drawn on their CPU threads";
    if let Some(bytes) = read_side_file(
        &dir.join(CPU_ANNOTATIONS_FILE),
        CPU_ANNOTATIONS_FILE,
        CPU_ANNOTATIONS_CAP,
        lost,
        &mut warnings,
    ) {
        warnings.extend(parse_lines(&bytes, CPU_ANNOTATIONS_FILE, entry));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_appended_read_back_and_a_cut_last_line_is_a_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        append_cpu_annotation_lines(dir.path(), b"{\"a\":1}\n{\"a\":2}\n").expect("append");
        append_cpu_annotation_lines(dir.path(), b"{\"a\":3}\n{\"a\"").expect("append");
        let mut seen = Vec::new();
        let warnings = read_cpu_annotation_lines(dir.path(), |line| {
            serde_json::from_str::<serde_json::Value>(line).map_err(|e| e.to_string())?;
            seen.push(line.to_owned());
            Ok(())
        });
        assert_eq!(seen, ["{\"a\":1}", "{\"a\":2}", "{\"a\":3}"]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].to_string().contains(CPU_ANNOTATIONS_FILE));
    }

    #[test]
    fn no_file_is_no_lines_and_no_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        let warnings = read_cpu_annotation_lines(dir.path(), |_| panic!("no line"));
        assert!(warnings.is_empty());
    }
}
