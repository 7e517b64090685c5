//! `user_annotations.json`: `{"<external id>": "<name>"}` for the CUSTOM1
//! external-correlation ids a program pushed around its regions of interest.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use serde_json::Value;

use super::error::DumpError;
use super::meta::file_label;
use super::USER_ANNOTATIONS_FILE;

/// Parse the file's bytes; `file` names it in errors.
pub fn parse_user_annotations(
    bytes: &[u8],
    file: &str,
) -> Result<BTreeMap<u64, String>, DumpError> {
    let bad = |problem: String| DumpError::BadSideFile {
        file: file.to_owned(),
        line: 1,
        problem,
    };
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(bad("not a JSON object of external id -> name".to_owned()));
    };
    let mut out = BTreeMap::new();
    for (key, name) in map {
        let id: u64 = key
            .parse()
            .map_err(|_| bad(format!("key {key:?} is not an external id (decimal u64)")))?;
        let Value::String(name) = name else {
            return Err(bad(format!("the name of id {id} is not a string: {name}")));
        };
        out.insert(id, name);
    }
    Ok(out)
}

/// Read `path`; a missing file gives no annotations.
pub fn read_user_annotations(path: impl AsRef<Path>) -> Result<BTreeMap<u64, String>, DumpError> {
    let path = path.as_ref();
    let name = file_label(path, USER_ANNOTATIONS_FILE);
    match fs::read(path) {
        Ok(bytes) => parse_user_annotations(&bytes, &name),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(DumpError::io(&name, e)),
    }
}

/// The file's bytes, as Python's `json.dump(d, f, indent=1)` writes them (ASCII names
/// come out byte-identical; others as UTF-8 rather than `\uXXXX`).
pub fn user_annotations_bytes(annotations: &BTreeMap<u64, String>) -> Vec<u8> {
    use serde::Serialize;
    // Integer keys serialise as JSON strings, in numeric order.
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    if annotations.serialize(&mut ser).is_err() {
        out = b"{}".to_vec();
    }
    out
}

/// Write `annotations` to `path`.
pub fn write_user_annotations(
    path: impl AsRef<Path>,
    annotations: &BTreeMap<u64, String>,
) -> Result<(), DumpError> {
    let path = path.as_ref();
    fs::write(path, user_annotations_bytes(annotations))
        .map_err(|e| DumpError::io(&file_label(path, USER_ANNOTATIONS_FILE), e))
}
