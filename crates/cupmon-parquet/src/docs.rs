//! The documentation that comes from the schema: the column tables of
//! `docs/parquet.md` and the Trino tables of `docs/sql/trino/tables.sql`. Tests
//! compare the checked-in files with these, so the docs cannot drift from the code.

use std::fmt::Write as _;

use crate::datasets::DATASETS;
use crate::schema::{ColType, Enc};

fn encoding(enc: Enc) -> &'static str {
    match enc {
        Enc::Dict => "dictionary",
        Enc::Delta => "DELTA_BINARY_PACKED",
        Enc::Plain => "PLAIN",
    }
}

fn parquet_type(ty: ColType) -> String {
    let physical = match ty.physical() {
        parquet::basic::Type::BYTE_ARRAY => "BYTE_ARRAY (STRING)".to_owned(),
        p => p.to_string(),
    };
    if ty.nullable() {
        format!("{physical}, nullable")
    } else {
        physical
    }
}

/// Markdown: one table per dataset (column, SQL type, Parquet type, encoding,
/// meaning), the partition columns last.
pub fn schema_markdown() -> String {
    let mut s = String::new();
    for spec in DATASETS {
        let _ = writeln!(s, "### `{}/`: {}\n", spec.name, spec.doc);
        s.push_str(
            "| column | SQL | Parquet | encoding | meaning |\n| --- | --- | --- | --- | --- |\n",
        );
        let mut last_doc = "";
        for c in spec.all_columns() {
            // Columns of one group (grid_x, grid_y, grid_z) share the first's text.
            let doc = if c.doc.is_empty() { last_doc } else { c.doc };
            last_doc = doc;
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} |",
                c.name,
                c.ty.sql(),
                parquet_type(c.ty),
                encoding(c.enc),
                if c.doc.is_empty() { "as above" } else { doc }
            );
        }
        s.push_str("| `day` | DATE | (directory) | | partition: the UTC day of the row's time |\n");
        s.push_str("| `hour` | BIGINT | (directory) | | partition: its UTC hour, 0-23 |\n\n");
    }
    s
}

/// Trino (Hive connector) tables over an export at `LOCATION` (replace it).
pub fn trino_tables() -> String {
    let mut s = String::from(
        "-- Trino (Hive connector) tables over a `cupmon export-parquet` directory.\n\
         -- Generated from cupmon-parquet's schema (docs.rs); a test keeps it in step.\n\
         -- Replace LOCATION with the directory's URI (s3://bucket/fleet, hdfs://..., file:///...).\n\
         -- After each export adds partitions:\n\
         --   CALL hive.system.sync_partition_metadata('cupmon', 'kernels', 'ADD');\n\n\
         CREATE SCHEMA IF NOT EXISTS hive.cupmon;\n\n",
    );
    for spec in DATASETS {
        let _ = writeln!(s, "CREATE TABLE IF NOT EXISTS hive.cupmon.{} (", spec.name);
        for c in spec.all_columns() {
            let _ = writeln!(s, "    {} {},", c.name, c.ty.sql());
        }
        let _ = writeln!(
            s,
            "    day DATE,\n    hour INTEGER\n) WITH (\n    external_location = 'LOCATION/{}',\n    \
             format = 'PARQUET',\n    partitioned_by = ARRAY['day', 'hour']\n);\n\
             CALL hive.system.sync_partition_metadata('cupmon', '{}', 'ADD');\n",
            spec.name, spec.name
        );
    }
    s
}
