//! `user_annotations.jsonl`: one `{"id":N,"name":"..."}` line per CUSTOM1 external id,
//! appended when the program first pushes it. Appending (never rewriting) means a kill
//! at any moment leaves every name written before it; a cut last line is skipped with a
//! warning, as in `kernel_names.tsv`.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::annotation_index_writer::IndexWriter;
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
/// Returns the warning for a damaged last line.
pub fn parse_annotation_log(
    bytes: &[u8],
    file: &str,
) -> Result<(BTreeMap<u64, String>, Option<DumpWarning>), DumpError> {
    let mut out = BTreeMap::new();
    let damage = parse_lines(bytes, file, |line| {
        let (id, name) = parse_entry(line)?;
        out.insert(id, name);
        Ok(())
    })?;
    Ok((out, damage))
}

/// Read `path`; a missing file gives no annotations.
pub fn read_annotation_log(
    path: impl AsRef<Path>,
) -> Result<(BTreeMap<u64, String>, Option<DumpWarning>), DumpError> {
    let path = path.as_ref();
    let name = file_label(path, USER_ANNOTATIONS_LOG_FILE);
    match fs::read(path) {
        Ok(bytes) => parse_annotation_log(&bytes, &name),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok((BTreeMap::new(), None)),
        Err(e) => Err(DumpError::io(&name, e)),
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
        let (map, damage) = parse_annotation_log(&bytes, "a.jsonl").unwrap();
        assert_eq!(damage, None);
        assert_eq!(map[&7], "step \"1\"\n\ttab");
        assert_eq!(map[&u64::MAX], "é");
    }

    #[test]
    fn a_line_that_is_not_an_annotation_names_file_and_line() {
        let bytes = b"{\"id\":1,\"name\":\"a\"}\n{\"id\":\"x\",\"name\":\"b\"}\n{\"id\":3,\"name\":\"c\"}\n";
        let err = parse_annotation_log(bytes, "a.jsonl")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("a.jsonl: line 2: not a {\"id\""), "{err}");
    }
}
