//! Only types every engine reads unchanged: signed INT32/INT64 without annotations,
//! UTF-8 strings, booleans; no unsigned integer, no TIMESTAMP (Spark turns UINT64
//! into a decimal and refuses TIMESTAMP(NANOS); Trino rejects large UINT32 stats).

use cupmon_parquet::{DATASETS, SCHEMA_VERSION};
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::ColumnDescPtr;

use crate::common::*;

fn check(c: &ColumnDescPtr, where_: &str) {
    let name = c.name();
    assert!(
        matches!(
            c.physical_type(),
            PhysicalType::INT32
                | PhysicalType::INT64
                | PhysicalType::BYTE_ARRAY
                | PhysicalType::BOOLEAN
        ),
        "{where_}: {name} is {:?}",
        c.physical_type()
    );
    match c.logical_type_ref() {
        None | Some(LogicalType::String) => {}
        Some(other) => panic!("{where_}: {name} has the logical type {other:?}"),
    }
    assert!(
        matches!(
            c.converted_type(),
            ConvertedType::NONE | ConvertedType::UTF8
        ),
        "{where_}: {name} has the converted type {:?}",
        c.converted_type()
    );
    if c.physical_type() == PhysicalType::BYTE_ARRAY {
        assert_eq!(
            c.logical_type_ref(),
            Some(&LogicalType::String),
            "{where_}: {name}"
        );
    }
}

#[test]
fn the_declared_schema_has_no_unsigned_or_timestamp_type() {
    for spec in DATASETS {
        let descr = parquet::schema::types::SchemaDescriptor::new(spec.parquet_schema());
        assert_eq!(descr.num_columns(), spec.all_columns().count());
        for c in descr.columns() {
            check(c, spec.name);
        }
    }
}

#[test]
fn written_files_have_only_signed_integers_strings_and_booleans() {
    let out = tempfile::tempdir().unwrap();
    for fixture in FIXTURES {
        export(&fixture_dir(fixture), &options(out.path())).unwrap();
    }
    let files = parquet_files(out.path());
    assert!(files.len() >= 8);
    for f in files {
        let reader = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        let meta = reader.metadata().file_metadata();
        for c in meta.schema_descr().columns() {
            check(c, &f.display().to_string());
        }
        let kv = meta.key_value_metadata().unwrap();
        let version = kv
            .iter()
            .find(|k| k.key == "cupmon.schema_version")
            .unwrap();
        assert_eq!(
            version.value.as_deref(),
            Some(SCHEMA_VERSION.to_string().as_str())
        );
    }
}
