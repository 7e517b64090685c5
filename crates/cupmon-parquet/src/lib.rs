//! cupmon-parquet: cupmon dumps as Parquet datasets that DuckDB, Spark and Trino
//! read unchanged, for questions across ranks, hosts and days.
//!
//! [`export_dump`] reads a dump through `cupmon_records::walk_slice_apart` (a `--from/--to`
//! slice reads only the segments and frames that can hold its rows) and writes
//! one dataset per record kind (`kernels/`, `memcpy/`, `memset/`, `api/`), the records
//! on a clock that could not be converted in `off_clock/` (only when there are any),
//! plus a row per export in `dumps/`, laid out as
//! `OUT/<dataset>/day=YYYY-MM-DD/hour=H/<host>.r<rank>.p<pid>.<seq>.parquet` (UTC).
//! Files are written under a temporary name and renamed; their names depend only on
//! the dump and the export (`<seq>`: the first chunk read, or the `--from/--to`
//! slice), so a re-run on a grown dump adds files for the new chunks only and hosts
//! writing into one shared directory never collide. The columns are declared once
//! per dataset (`datasets/`) with their types, encodings and meaning
//! ([`DATASETS`], documented in docs/parquet.md); [`write_sql`] writes `cupmon.sql`,
//! the DuckDB views and macros over a dataset directory.
//!
//! This crate is the only one that links the `parquet` crate (the low-level column
//! writer: no Arrow), so that nothing else recompiles it and the Python extension
//! does not carry it. The encoder (`encode/`) writes cupmon's own pages spliced
//! into the parquet crate's files: the dictionary and delta columns are encoded by
//! cupmon itself (the crate's writer hashed every value of every dictionary
//! column), to the bytes the crate's writer gives them; the crate writes the file,
//! its footer and the PLAIN columns.

mod chunk_numbers;
mod correlations;
mod datasets;
mod docs;
mod dump_info;
mod encode;
mod error;
mod export;
mod file_writer;
mod name_cache;
mod partition;
mod pool;
mod record_export;
mod row_order;
mod run_info;
mod schema;
mod sink;
mod sql;
mod state;
mod table;
mod words;

pub use datasets::{DumpRow, DATASETS};
pub use docs::{schema_markdown, trino_tables};
pub use error::ExportError;
pub use export::{export_dump, DumpExport, ExportOptions, Kinds};
pub use partition::{hour_of, partition_dir};
pub use pool::release_buffers;
pub use record_export::{RecordExport, RecordTotals};
pub use run_info::{RunInfo, RUN_COLUMNS};
pub use schema::{ColType, ColumnSpec, DatasetSpec, Enc, SCHEMA_VERSION};
pub use sink::{DatasetTotals, ROW_GROUP_ROWS};
pub use sql::{sql_file_text, write_sql, SQL_FILE};
