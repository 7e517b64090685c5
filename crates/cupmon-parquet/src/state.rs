//! Earlier exports into the same directory, so that a re-run adds only what is new:
//! each export's `dumps` file carries, in its key-value metadata
//! (`cupmon.export`), the dump's session start, the chunks it read and its time
//! slice. An export without `--from/--to` starts at the chunk after the last one an
//! earlier such export read; a slice that overlaps an earlier export of the same
//! dump is refused (its rows would be there twice), unless it is the same slice
//! again, whose files it replaces.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::ExportError;

/// What one export of a dump took from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportState {
    /// The `<seq>` of its file names.
    pub seq: String,
    pub session_start_unix_ns: Option<u64>,
    /// Chunks `[first_chunk, end_chunk)` were read.
    pub first_chunk: u64,
    pub end_chunk: u64,
    pub from_ns: Option<i64>,
    pub to_ns: Option<i64>,
}

/// The key of the state in a `dumps` file's metadata.
pub const STATE_KEY: &str = "cupmon.export";

impl ExportState {
    pub fn sliced(&self) -> bool {
        self.from_ns.is_some() || self.to_ns.is_some()
    }

    pub fn to_json(&self) -> String {
        json!({
            "seq": self.seq,
            "session_start_unix_ns": self.session_start_unix_ns,
            "first_chunk": self.first_chunk,
            "end_chunk": self.end_chunk,
            "from_ns": self.from_ns,
            "to_ns": self.to_ns,
        })
        .to_string()
    }

    fn from_json(text: &str) -> Result<Self, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("{STATE_KEY}: {e}"))?;
        let u = |k: &str| v.get(k).and_then(Value::as_u64);
        let i = |k: &str| v.get(k).and_then(Value::as_i64);
        Ok(Self {
            seq: v
                .get("seq")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{STATE_KEY} has no seq"))?
                .to_owned(),
            session_start_unix_ns: u("session_start_unix_ns"),
            first_chunk: u("first_chunk")
                .ok_or_else(|| format!("{STATE_KEY} has no first_chunk"))?,
            end_chunk: u("end_chunk").ok_or_else(|| format!("{STATE_KEY} has no end_chunk"))?,
            from_ns: i("from_ns"),
            to_ns: i("to_ns"),
        })
    }

    /// `chunks 0..12` or `chunks 0..12 of [from, to)`, for messages.
    pub fn describe(&self) -> String {
        let mut s = format!("chunks {}..{}", self.first_chunk, self.end_chunk);
        if self.sliced() {
            let t = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
            s.push_str(&format!(
                " of [{}, {}) Unix ns",
                t(self.from_ns),
                t(self.to_ns)
            ));
        }
        s
    }
}

/// The earlier exports in `out` whose files are named `<stem>.*`.
pub fn earlier_exports(out: &Path, stem: &str) -> Result<Vec<ExportState>, ExportError> {
    let mut found = Vec::new();
    let prefix = format!("{stem}.");
    for path in
        parquet_files(&out.join(<crate::datasets::DumpRows as crate::table::Rows>::SPEC.name))?
    {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if !name.starts_with(&prefix) {
            continue;
        }
        found.push(read_state(&path)?);
    }
    found.sort_by(|a, b| a.first_chunk.cmp(&b.first_chunk).then(a.seq.cmp(&b.seq)));
    Ok(found)
}

fn read_state(path: &Path) -> Result<ExportState, ExportError> {
    let bad = |why: String| ExportError::BadState {
        path: path.to_path_buf(),
        why,
    };
    let file = std::fs::File::open(path).map_err(|e| ExportError::io(path, "cannot read", e))?;
    let meta = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&file)
        .map_err(|e| bad(e.to_string()))?;
    let text = meta
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == STATE_KEY))
        .and_then(|k| k.value.clone())
        .ok_or_else(|| bad(format!("no {STATE_KEY} metadata")))?;
    ExportState::from_json(&text).map_err(bad)
}

/// Every `*.parquet` under `dir` (none when it does not exist).
fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(ExportError::io(&d, "cannot list", e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| ExportError::io(&d, "cannot list", e))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else if name.ends_with(".parquet") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Where a new export starts (its first chunk), or why it may not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Read chunks from this one on.
    From(u64),
    /// It overlaps this earlier export.
    Overlaps(ExportState),
}

/// The plan for an export with slice `[from, to)` (both `None`: the whole dump,
/// incrementally) named `seq`, given the earlier exports of the dump.
pub fn plan(earlier: &[ExportState], seq: &str, from: Option<i64>, to: Option<i64>) -> Plan {
    let sliced = from.is_some() || to.is_some();
    let overlaps_time = |e: &ExportState| {
        let (a0, a1) = (from.unwrap_or(i64::MIN), to.unwrap_or(i64::MAX));
        let (b0, b1) = (e.from_ns.unwrap_or(i64::MIN), e.to_ns.unwrap_or(i64::MAX));
        a0 < b1 && b0 < a1
    };
    let start = if sliced {
        0
    } else {
        earlier
            .iter()
            .filter(|e| !e.sliced())
            .map(|e| e.end_chunk)
            .max()
            .unwrap_or(0)
    };
    for e in earlier {
        if e.seq == seq || e.end_chunk <= e.first_chunk {
            continue;
        }
        let chunks_overlap = e.end_chunk > start;
        if (sliced || e.sliced()) && chunks_overlap && overlaps_time(e) {
            return Plan::Overlaps(e.clone());
        }
    }
    Plan::From(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(seq: &str, chunks: (u64, u64), slice: (Option<i64>, Option<i64>)) -> ExportState {
        ExportState {
            seq: seq.to_owned(),
            session_start_unix_ns: Some(1),
            first_chunk: chunks.0,
            end_chunk: chunks.1,
            from_ns: slice.0,
            to_ns: slice.1,
        }
    }

    #[test]
    fn whole_exports_continue_after_the_last_chunk_read() {
        let earlier = [
            state("0", (0, 10), (None, None)),
            state("10", (10, 12), (None, None)),
        ];
        assert_eq!(plan(&earlier, "12", None, None), Plan::From(12));
        assert_eq!(plan(&[], "0", None, None), Plan::From(0));
    }

    #[test]
    fn overlapping_slices_are_refused_but_the_same_slice_is_redone() {
        let earlier = [state("s10-20", (0, 5), (Some(10), Some(20)))];
        assert_eq!(plan(&earlier, "s10-20", Some(10), Some(20)), Plan::From(0));
        assert_eq!(plan(&earlier, "s20-30", Some(20), Some(30)), Plan::From(0));
        assert!(matches!(
            plan(&earlier, "s15-30", Some(15), Some(30)),
            Plan::Overlaps(_)
        ));
        assert!(matches!(plan(&earlier, "0", None, None), Plan::Overlaps(_)));
        let whole = [state("0", (0, 5), (None, None))];
        assert!(matches!(
            plan(&whole, "s1-2", Some(1), Some(2)),
            Plan::Overlaps(_)
        ));
        assert_eq!(
            plan(
                &[state("0", (0, 0), (None, None))],
                "s1-2",
                Some(1),
                Some(2)
            ),
            Plan::From(0)
        );
    }
}
