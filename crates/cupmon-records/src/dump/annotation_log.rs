//! `user_annotations.jsonl`: one `{"id":N,"name":"..."}` line per CUSTOM1 external id,
//! appended when the program first pushes it. Appending (never rewriting) means a kill
//! at any moment leaves every name written before it; a cut last line is skipped with a
//! warning, and so are bad lines before it, counted, as in `kernel_names.tsv`.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::annotation_index_writer::IndexWriter;
use super::dump_file::{read_side_file, USER_ANNOTATIONS_CAP};
use super::error::DumpError;
use super::meta::file_label;
use super::side_lines::parse_lines;
use super::warning::DumpWarning;
use super::USER_ANNOTATIONS_LOG_FILE;

#[derive(Serialize, Deserialize)]
struct Line<'a> {
    id: u64,
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
}

/// One line of the file, newline included.
pub fn annotation_line(id: u64, name: &str) -> Vec<u8> {
    let line = Line {
        id,
        name: name.into(),
    };
    // A struct of a number and a string always serialises.
    let mut out = serde_json::to_vec(&line).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Parse the file's bytes; `file` names it in messages. A later line for an id wins.
/// Returns the warnings for bad lines (skipped, counted) and a damaged last line.
pub fn parse_annotation_log(bytes: &[u8], file: &str) -> (BTreeMap<u64, String>, Vec<DumpWarning>) {
    let mut out = BTreeMap::new();
    let damage = parse_lines(bytes, file, |line| {
        let (id, name) = parse_entry(line)?;
        out.insert(id, name);
        Ok(())
    });
    (out, damage)
}

/// What a dump's output lacks when its annotation log is not read.
pub(super) const LOG_LOST: &str = "user annotations are shown by their external ids";

/// Read `path`; a missing file gives no annotations, and so does one refused by the
/// rule every dump file is read by (a FIFO, a device, a planted link, a file past
/// [`USER_ANNOTATIONS_CAP`]), with its warning.
pub fn read_annotation_log(path: impl AsRef<Path>) -> (BTreeMap<u64, String>, Vec<DumpWarning>) {
    let path = path.as_ref();
    let name = file_label(path, USER_ANNOTATIONS_LOG_FILE);
    let mut warnings = Vec::new();
    match read_side_file(path, &name, USER_ANNOTATIONS_CAP, LOG_LOST, &mut warnings) {
        Some(bytes) => parse_annotation_log(&bytes, &name),
        None => (BTreeMap::new(), warnings),
    }
}

/// Parse one line of the file (no newline): its id and name, or what is wrong with it.
pub(super) fn parse_entry(line: &str) -> Result<(u64, String), String> {
    let entry: Line = serde_json::from_str(line).map_err(|e| {
        format!("not a {{\"id\": <external id>, \"name\": <string>}} line ({e}): {line:?}")
    })?;
    Ok((entry.id, entry.name.into_owned()))
}

/// Appends annotations to a dump's `user_annotations.jsonl`, one `write` per line and
/// unbuffered: a line is in the file (the kernel's page cache) as soon as
/// [`AnnotationLog::append`] returns, so killing the process cannot lose it. It keeps
/// the log's index (`annotation_index.rs`) as it goes.
#[derive(Debug)]
pub struct AnnotationLog {
    file: File,
    name: String,
    index: IndexWriter,
}

impl AnnotationLog {
    /// Open (create) `user_annotations.jsonl` in the dump directory `dir` for appending.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, DumpError> {
        let path = dir.as_ref().join(USER_ANNOTATIONS_LOG_FILE);
        let name = file_label(&path, USER_ANNOTATIONS_LOG_FILE);
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| DumpError::io(&name, e))?;
        let index = IndexWriter::open(dir.as_ref());
        Ok(Self { file, name, index })
    }

    /// Append the line for `id`.
    pub fn append(&mut self, id: u64, name: &str) -> Result<(), DumpError> {
        let line = annotation_line(id, name);
        self.file
            .write_all(&line)
            .map_err(|e| DumpError::io(&self.name, e))?;
        self.index.add_line(line.len() as u64, id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_with_any_name() {
        let mut bytes = annotation_line(7, "step \"1\"\n\ttab");
        bytes.extend(annotation_line(u64::MAX, "é"));
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            "{\"id\":7,\"name\":\"step \\\"1\\\"\\n\\ttab\"}\n{\"id\":18446744073709551615,\"name\":\"é\"}\n"
        );
        let (map, damage) = parse_annotation_log(&bytes, "a.jsonl");
        assert_eq!(damage, []);
        assert_eq!(map[&7], "step \"1\"\n\ttab");
        assert_eq!(map[&u64::MAX], "é");
    }

    #[test]
    fn a_line_that_is_not_an_annotation_is_skipped_and_named() {
        let bytes = b"{\"id\":1,\"name\":\"a\"}\n{\"id\":\"x\",\"name\":\"b\"}\n{\"id\":3,\"name\":\"c\"}\n";
        let (map, warnings) = parse_annotation_log(bytes, "a.jsonl");
        assert_eq!(map.len(), 2);
        let [w] = &warnings[..] else {
            panic!("{warnings:?}")
        };
        let w = w.to_string();
        assert!(
            w.starts_with("a.jsonl: 1 bad line skipped (the first, line 2: not a {\"id\""),
            "{w}"
        );
    }
}
