//! Fixtures, exports into temporary directories, and the rows read back.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cupmon_parquet::{export_dump, DumpExport, ExportError, ExportOptions, Kinds};
use cupmon_records::dump::SegmentPolicy;
use cupmon_records::{DumpWriter, MetaFile};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

pub const FIXTURES: [&str; 2] = ["cuda_workload", "torch_mlp"];

/// The repo's copy of the real H200 recordings.
pub fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(name)
}

pub fn options(out: &Path) -> ExportOptions {
    ExportOptions {
        out: out.to_path_buf(),
        kinds: Kinds::default(),
        from_ns: None,
        to_ns: None,
        job: Some("test-job".to_owned()),
        host: None,
        default_host: "testhost".to_owned(),
    }
}

pub fn export(dir: &Path, opts: &ExportOptions) -> Result<DumpExport, ExportError> {
    export_dump(dir, opts, |_| {})
}

/// Every `*.parquet` file under `dir`, sorted (temporary files are not).
pub fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Every file under `dir` whose name starts with a dot (temporary files).
pub fn hidden_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else if e.file_name().to_string_lossy().starts_with('.') {
                found.push(p);
            }
        }
    }
    found
}

/// One row: column name -> value.
pub type Row = BTreeMap<String, Field>;

/// Every row of `out/<dataset>/`, file by file, in file order.
pub fn rows(out: &Path, dataset: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for f in parquet_files(&out.join(dataset)) {
        let reader = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        for row in reader.get_row_iter(None).unwrap() {
            let row = row.unwrap();
            rows.push(
                row.get_column_iter()
                    .map(|(name, field)| (name.clone(), field.clone()))
                    .collect(),
            );
        }
    }
    rows
}

pub fn int(row: &Row, column: &str) -> Option<i64> {
    match row
        .get(column)
        .unwrap_or_else(|| panic!("no column {column}"))
    {
        Field::Null => None,
        Field::Int(v) => Some(i64::from(*v)),
        Field::Long(v) => Some(*v),
        other => panic!("{column}: not an integer: {other:?}"),
    }
}

pub fn text(row: &Row, column: &str) -> Option<String> {
    match row
        .get(column)
        .unwrap_or_else(|| panic!("no column {column}"))
    {
        Field::Null => None,
        Field::Str(s) => Some(s.clone()),
        other => panic!("{column}: not a string: {other:?}"),
    }
}

/// Rows of a dataset of one export, by dataset name.
pub fn rows_written(e: &DumpExport, dataset: &str) -> u64 {
    e.datasets
        .iter()
        .find(|(n, _)| *n == dataset)
        .map_or(0, |(_, t)| t.rows)
}

/// A segmented dump's writer in `dir` (CUPTI 13.0, 8 MiB buffers, the session closed,
/// nothing dropped): segments of `segment_size` bytes or an hour, up to 1 GiB kept.
pub fn segmented_writer(dir: &Path, segment_size: u64) -> DumpWriter {
    let mut meta = MetaFile::new();
    meta.set("cupti_version", 130_000)
        .set("buffer_size", 8 << 20)
        .set("session_open", false)
        .set("dropped_records", 0);
    let policy = SegmentPolicy {
        segment_size,
        segment_period: Duration::from_secs(3600),
        keep: 1 << 30,
        keep_for: None,
    };
    DumpWriter::create_segmented(dir, &meta, policy).unwrap()
}
