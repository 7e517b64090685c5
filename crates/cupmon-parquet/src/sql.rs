//! `OUT/cupmon.sql`: DuckDB views and macros over an export directory
//! (`cupmon sql OUT`, or `duckdb -init cupmon.sql` inside OUT). The directory is
//! the `cupmon_dir` variable, read when a query runs. The file holds no path of its
//! own: exports are copied and moved (between hosts, into buckets), and DuckDB reads
//! the files a view names when the view is created, so a path written at export
//! time would fail everywhere else. It keeps a `cupmon_dir` set before it (what
//! `cupmon sql` and `cupmon.sql.connect` do, with the directory they were given) and
//! otherwise takes `.`, the directory DuckDB runs in. A dataset with no files yet
//! is an empty view with its columns, so that every view and macro works on every
//! export.

use std::fmt::Write as _;
use std::path::Path;

use crate::datasets::{OffClockRows, StackRows, DATASETS};
use crate::error::ExportError;
use crate::schema::DatasetSpec;
use crate::table::Rows;

/// The file's name inside the export directory.
pub const SQL_FILE: &str = "cupmon.sql";

/// The views over the base views (top_kernels, busy_per_minute, stragglers, ...).
const VIEWS: &str = include_str!("../sql/views.sql");

/// The text of `cupmon.sql` for the export directory `out`: which datasets have
/// files decides which views read them; the text names no path.
pub fn sql_file_text(out: &Path) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "-- cupmon {}: views over the Parquet datasets of this directory (schema version {}).\n\
         -- `cupmon sql DIR`, or `duckdb -init cupmon.sql` run inside DIR; the datasets' columns: docs/parquet.md.\n\
         -- From elsewhere: SET VARIABLE cupmon_dir = '/path/to/DIR'; then .read /path/to/DIR/cupmon.sql\n\
         -- The views read cupmon_dir when a query runs; this file names no path, so a copy works anywhere.\n\
         SET VARIABLE cupmon_dir = coalesce(getvariable('cupmon_dir'), '.');\n",
        env!("CARGO_PKG_VERSION"),
        crate::SCHEMA_VERSION,
    );
    for spec in DATASETS {
        let view = if spec.name == "dumps" {
            "dump_exports"
        } else {
            spec.name
        };
        let extra = if spec.index_of("duration_ns").is_some() {
            ", start_ns + duration_ns AS end_ns"
        } else {
            ""
        };
        // A process's stacks are written again by each export whose rows name them.
        let distinct = if spec.name == StackRows::SPEC.name {
            "DISTINCT "
        } else {
            ""
        };
        if has_files(&out.join(spec.name)) {
            let _ = writeln!(
                s,
                "CREATE OR REPLACE VIEW {view} AS SELECT {distinct}*{extra} FROM read_parquet(\
                 getvariable('cupmon_dir') || '/{}/*/*/*.parquet', hive_partitioning = true, \
                 union_by_name = true);",
                spec.name
            );
        } else if spec.name != OffClockRows::SPEC.name {
            // `off_clock` has files only for dumps with records on their own clock,
            // and no view stands on it: without files it is not mentioned.
            let _ = writeln!(
                s,
                "-- No {} files yet: an empty view with its columns.\n\
                 CREATE OR REPLACE VIEW {view} AS SELECT *{extra} FROM ({}) WHERE false;",
                spec.name,
                typed_nulls(&spec)
            );
        }
    }
    s.push('\n');
    s.push_str(VIEWS);
    s
}

/// `SELECT NULL::BIGINT AS start_ns, ...` with the partition columns.
fn typed_nulls(spec: &DatasetSpec) -> String {
    let mut cols: Vec<String> = spec
        .all_columns()
        .map(|c| format!("NULL::{} AS {}", c.ty.sql(), c.name))
        .collect();
    cols.push("NULL::DATE AS day".to_owned());
    cols.push("NULL::BIGINT AS hour".to_owned());
    format!("SELECT {}", cols.join(", "))
}

/// Whether `dir/day=*/hour=*/` holds a Parquet file.
fn has_files(dir: &Path) -> bool {
    let entries = |d: &Path| std::fs::read_dir(d).into_iter().flatten().flatten();
    entries(dir).any(|day| {
        entries(&day.path()).any(|hour| {
            entries(&hour.path()).any(|f| {
                let name = f.file_name();
                let name = name.to_string_lossy();
                !name.starts_with('.') && name.ends_with(".parquet")
            })
        })
    })
}

/// Write `out/cupmon.sql` (through a temporary file and a rename: several hosts
/// exporting into one directory each rewrite it whole).
pub fn write_sql(out: &Path) -> Result<(), ExportError> {
    let out = std::path::absolute(out).map_err(|e| ExportError::io(out, "cannot resolve", e))?;
    let path = out.join(SQL_FILE);
    let text = sql_file_text(&out);
    let output_error = |e: cupmon_files::OutputError| ExportError::io(e.path, e.what, e.err);
    let file = cupmon_files::AtomicOutput::create(&path).map_err(output_error)?;
    let mut writer = file.writer().map_err(output_error)?;
    std::io::Write::write_all(&mut writer, text.as_bytes())
        .map_err(|e| ExportError::io(&path, "cannot write", e))?;
    file.commit(writer).map_err(output_error)
}
