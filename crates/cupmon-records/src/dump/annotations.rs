//! `user_annotations.json`: `{"<external id>": "<name>"}` for the CUSTOM1
//! external-correlation ids a program pushed around its regions of interest: the file
//! older cupmon versions rewrote whole at each window (a kill in between could leave it
//! cut or empty). cupmon now appends `user_annotations.jsonl` (`annotation_log.rs`)
//! instead; readers take both, the log winning.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::annotation_log::read_annotation_log;
use super::dump_file::{read_side_file, refused_error, USER_ANNOTATIONS_CAP};
use super::error::DumpError;
use super::meta::file_label;
use super::warning::DumpWarning;
use super::{USER_ANNOTATIONS_FILE, USER_ANNOTATIONS_LOG_FILE};
use cupmon_files::replace_file;

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
    match cupmon_files::read_capped_if_present(path, USER_ANNOTATIONS_CAP) {
        Ok(Some(bytes)) => parse_user_annotations(&bytes, &name),
        Ok(None) => Ok(BTreeMap::new()),
        Err(e) => Err(refused_error(&name, e)),
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

/// Write `annotations` to `path` (through a temporary file and a rename).
pub fn write_user_annotations(
    path: impl AsRef<Path>,
    annotations: &BTreeMap<u64, String>,
) -> Result<(), DumpError> {
    let path = path.as_ref();
    replace_file(path, &user_annotations_bytes(annotations))
        .map_err(|e| DumpError::io(&file_label(path, USER_ANNOTATIONS_FILE), e))
}

/// The annotations of the dump directory `dir`: `user_annotations.json` (older cupmon
/// dumps), then `user_annotations.jsonl` over it; either may be missing. Damage (a cut
/// or bad line of the log, a cut or malformed `.json`, a file refused) comes back as
/// warnings. Reads the whole log: [`crate::dump::Dump`] reads only what is asked of it.
pub fn read_dump_annotations(dir: &Path) -> (BTreeMap<u64, String>, Vec<DumpWarning>) {
    let (mut annotations, mut warnings) = read_old_annotations(dir);
    let (log, damage) = read_annotation_log(dir.join(USER_ANNOTATIONS_LOG_FILE));
    annotations.extend(log);
    warnings.extend(damage);
    (annotations, warnings)
}

/// `user_annotations.json` of the dump directory `dir` (none when missing); a cut,
/// malformed or refused one is a warning.
pub(super) fn read_old_annotations(dir: &Path) -> (BTreeMap<u64, String>, Vec<DumpWarning>) {
    let mut warnings = Vec::new();
    let path = dir.join(USER_ANNOTATIONS_FILE);
    let file = USER_ANNOTATIONS_FILE;
    let lost = "its annotations' names were not read (the log's, if any, were)";
    let Some(bytes) = read_side_file(&path, file, USER_ANNOTATIONS_CAP, lost, &mut warnings) else {
        return (BTreeMap::new(), warnings);
    };
    let annotations = match serde_json::from_slice::<Value>(&bytes) {
        // A rewrite cut by a kill: what is there cannot be read, but the log may
        // hold the names.
        Err(e) if e.is_eof() => {
            warnings.push(DumpWarning::CutSideFile {
                file: file.to_owned(),
                problem: format!("{} bytes, not valid JSON: {e}", bytes.len()),
            });
            BTreeMap::new()
        }
        _ => match parse_user_annotations(&bytes, file) {
            Ok(annotations) => annotations,
            Err(e) => {
                warnings.push(DumpWarning::Unreadable {
                    file: file.to_owned(),
                    problem: match e {
                        DumpError::BadSideFile { problem, .. } => problem,
                        other => other.to_string(),
                    },
                    lost: lost.to_owned(),
                });
                BTreeMap::new()
            }
        },
    };
    (annotations, warnings)
}
