//! The datasets' schema, declared once: each column's name, type, encoding and
//! meaning. The Parquet schema, the writer's per-column settings, `docs/parquet.md`'s
//! tables (checked by a test) and the typed empty views of `cupmon.sql` all come
//! from these tables.
//!
//! Only types every engine reads unchanged: signed INT32/INT64 without annotations
//! (Spark turns UINT64 into a decimal, Trino rejects large UINT32 statistics), times
//! as plain INT64 Unix nanoseconds (Spark refuses TIMESTAMP(NANOS)), UTF-8 strings,
//! booleans. CUPTI's unsigned fields keep their values: a u32 goes into an INT64, a
//! u64 (sizes, graph node ids, all far below 2^63) into an INT64.

use std::sync::Arc;

use parquet::basic::{LogicalType, Repetition};
use parquet::schema::types::{Type, TypePtr};

pub use crate::encode::{ColType, Enc};
pub use crate::run_info::RUN_COLUMNS;

/// Version of the column set: bumped when a column is removed, renamed or changes
/// type or meaning (adding one at the end does not bump it), or when the views
/// come to need a new column. Written into every file's key-value metadata as
/// `cupmon.schema_version`. 2: `kernels.collective`, which the views' NCCL
/// classification reads (a version-1 file's kernels all count as compute there).
pub const SCHEMA_VERSION: u32 = 2;

/// One column of a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnSpec {
    pub name: &'static str,
    pub ty: ColType,
    pub enc: Enc,
    /// What it holds, for the documentation.
    pub doc: &'static str,
}

/// One dataset (`OUT/<name>/`).
#[derive(Debug, Clone, Copy)]
pub struct DatasetSpec {
    pub name: &'static str,
    pub doc: &'static str,
    /// Its own columns, after the [`RUN_COLUMNS`].
    pub columns: &'static [ColumnSpec],
}

impl DatasetSpec {
    /// Every column in file order: the run columns, then the dataset's own.
    pub fn all_columns(&self) -> impl Iterator<Item = &'static ColumnSpec> {
        RUN_COLUMNS.iter().chain(self.columns.iter())
    }

    /// The Parquet message type of the dataset's files.
    pub fn parquet_schema(&self) -> TypePtr {
        let fields = self.all_columns().map(|c| Arc::new(primitive(c))).collect();
        let root = Type::group_type_builder("cupmon")
            .with_fields(fields)
            .build()
            .expect("a group of primitive columns is a valid schema");
        Arc::new(root)
    }

    /// The column's index in file order, by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.all_columns().position(|c| c.name == name)
    }
}

fn primitive(c: &ColumnSpec) -> Type {
    let repetition = if c.ty.nullable() {
        Repetition::OPTIONAL
    } else {
        Repetition::REQUIRED
    };
    let logical = matches!(c.ty, ColType::Str | ColType::OptStr).then_some(LogicalType::String);
    Type::primitive_type_builder(c.name, c.ty.physical())
        .with_repetition(repetition)
        .with_logical_type(logical)
        .build()
        .expect("a plain primitive column is a valid type")
}
