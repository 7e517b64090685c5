//! The Parquet encoder: cupmon's own pages spliced into the parquet crate's files.
//!
//! The parquet crate (its low-level column writer: no Arrow) writes every file, its
//! footer and the columns cupmon leaves to it; the dictionary and delta columns,
//! which are nearly all of a kernel row, cupmon encodes itself, to the bytes the
//! crate's writer gives them (its value encoder hashes every value of every
//! dictionary column, row after row), and splices the finished column chunks into
//! the crate's row groups with `append_column`. `dict_tests` checks, setting by
//! setting, that both ways give the same file.
//!
//! Each file stands only on those above it in this list (nothing imports back up):
//!
//! 1. values: [`types`] (what a column holds, how it is encoded), [`symbols`] (the
//!    export's strings, the `Sym`s rows hold), [`rle`] and [`delta`] (the RLE /
//!    bit-packed hybrid and DELTA_BINARY_PACKED bytes), [`dictionary`] (a chunk's
//!    dictionary and its statistics), [`shape_table`] (a kernel row's launch shape,
//!    held once per shape);
//! 2. pages: [`column_index`] (page statistics), [`pages`] (a chunk of cupmon's
//!    pages: dictionary, data pages, offset index, what `append_column` needs);
//! 3. the row group: [`row_group`] (the next column; which pages the file takes);
//! 4. the ladder: [`column`] (the [`column::Encode`] trait every column type
//!    implements, and [`column::write_column`], its one encode-and-fall-back ladder:
//!    cupmon's dictionary or delta chunk where the file takes it, else the crate's
//!    writer);
//! 5. chunks: [`dict_chunks`] and [`delta_chunks`] (a column's values as a chunk);
//! 6. column types: [`int_columns`], [`opt_column`], [`string_columns`],
//!    [`constants`] (the run columns), and [`shapes`] (the launch-shape columns,
//!    which fall back on the per-row column types).
//!
//! Outside this folder it uses only `crate::pool` and `crate::row_order` (leaves):
//! the datasets (`crate::datasets`, `crate::table`) and the files
//! (`crate::file_writer`, `crate::sink`) stand on it.

pub(crate) mod column;
pub(crate) mod column_index;
pub(crate) mod constants;
pub(crate) mod delta;
pub(crate) mod delta_chunks;
pub(crate) mod dict_chunks;
#[cfg(test)]
mod dict_tests;
pub(crate) mod dictionary;
pub(crate) mod int_columns;
pub(crate) mod opt_column;
pub(crate) mod pages;
pub(crate) mod rle;
pub(crate) mod row_group;
pub(crate) mod shape_table;
pub(crate) mod shapes;
pub(crate) mod string_columns;
pub(crate) mod symbols;
pub(crate) mod types;

pub(crate) use column::{Column, Scratch, WriteCtx};
pub(crate) use constants::{write_constant, Constant};
pub(crate) use int_columns::{BoolCol, I32Col, I64Col, U32Col};
pub(crate) use opt_column::OptI64Col;
pub(crate) use row_group::RowGroupOut;
pub(crate) use shape_table::{Shape, ShapeTable};
pub(crate) use string_columns::{OptStrCol, StrCol};
pub(crate) use symbols::{Strings, Sym};
pub use types::{ColType, Enc};
