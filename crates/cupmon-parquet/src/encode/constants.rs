//! The run columns' values (job, host, rank, ...): the same in every row of a
//! file, written by cupmon ([`crate::encode::pages`]): the strings as one dictionary entry
//! and an RLE run per page, the integers as zero deltas. Where the file wants
//! another writer, they go through the parquet crate's a batch at a time from one
//! small buffer, so a million rows clone nothing.

use parquet::basic::Type as PhysicalType;
use parquet::data_type::{ByteArray, ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::writer::SerializedColumnWriter;

use super::column::{write_column, ColumnBufs, Encode, OwnPages, Scratch, WriteCtx};
use super::dictionary::int_statistics;
use super::pages::{Chunk, Indices, Levels, Values};
use super::row_group::RowGroupOut;
use super::types::{ColType, Enc};

/// A run column's value for a whole file.
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    Null,
    I32(i32),
    I64(i64),
    Str(ByteArray),
}

/// Write `value` in each of `rows` rows as the next column of `out`.
pub fn write_constant(
    ty: ColType,
    enc: Enc,
    value: &Constant,
    rows: usize,
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<(), ParquetError> {
    write_column(&ConstantColumn { ty, value, rows }, enc, ctx, scratch, out)
}

/// A column of `rows` rows of one value.
#[derive(Debug)]
struct ConstantColumn<'v> {
    ty: ColType,
    value: &'v Constant,
    rows: usize,
}

impl ConstantColumn<'_> {
    /// The value as a one-entry dictionary and a run per data page
    /// (`dictionary`), or as DELTA_BINARY_PACKED pages of zero deltas.
    fn chunk<'a>(
        &'a self,
        dictionary: bool,
        own: &OwnPages<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Option<Chunk<'a>> {
        let (value, rows, descr) = (self.value, self.rows, own.descr);
        let optional = descr.max_def_level() > 0;
        let plain = &mut bufs.plain;
        plain.clear();
        let (levels, range) = match value {
            Constant::Null if !optional => return None,
            Constant::Null => (Levels::AllNull, None),
            Constant::Str(v) => {
                plain.extend_from_slice(&(v.len() as u32).to_le_bytes());
                plain.extend_from_slice(v.data());
                (Levels::AllPresent, None)
            }
            Constant::I32(v) => {
                plain.extend_from_slice(&v.to_le_bytes());
                (Levels::AllPresent, Some((i64::from(*v), i64::from(*v))))
            }
            Constant::I64(v) => {
                plain.extend_from_slice(&v.to_le_bytes());
                (Levels::AllPresent, Some((*v, *v)))
            }
        };
        let nulls = if matches!(value, Constant::Null) {
            rows
        } else {
            0
        };
        let levels = if optional { levels } else { Levels::Required };
        // The crate's writer keeps the distinct count that `with_crate` gives only
        // when it came in one batch.
        let distinct = (range.is_some() && rows <= CONSTANT_BATCH).then_some(1);
        let statistics = (own.statistics && !matches!(value, Constant::Str(_)))
            .then(|| int_statistics(descr, range, distinct, nulls as u64));
        let values = if dictionary {
            Values::Dictionary {
                dictionary: plain,
                entries: usize::from(nulls == 0),
                indices: Indices::Zero,
            }
        } else {
            // The crate's delta blocks: 4 miniblocks of 32 INT32 or 64 INT64 values.
            let block = if descr.physical_type() == PhysicalType::INT32 {
                128
            } else {
                256
            };
            Values::DeltaConstant {
                value: range.map_or(0, |r| r.0),
                block,
            }
        };
        Some(Chunk {
            descr,
            rows,
            levels,
            values,
            statistics,
            nulls: nulls as u64,
        })
    }
}

/// The strings as one dictionary entry and an RLE run per page, the integers
/// (rank, pid) as zero deltas; other encodings through the crate's writer, a
/// batch at a time from one small buffer, so a million rows clone nothing.
impl Encode for ConstantColumn<'_> {
    fn dictionary<'a>(
        &'a self,
        own: &OwnPages<'a>,
        _ctx: &WriteCtx<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        Ok(self.chunk(true, own, bufs))
    }

    fn delta<'a>(
        &'a self,
        own: &OwnPages<'a>,
        _ctx: &WriteCtx<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        if matches!(self.value, Constant::Str(_)) {
            return Ok(None);
        }
        Ok(self.chunk(false, own, bufs))
    }

    fn with_crate(
        &self,
        _ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        out.with_writer(|w| with_crate(self.ty, self.value, self.rows, bufs, w))
    }
}

/// Values written per call for a constant column.
const CONSTANT_BATCH: usize = 8192;

/// `value` in each of `rows` rows through the crate's column writer.
fn with_crate(
    ty: ColType,
    value: &Constant,
    rows: usize,
    scratch: &mut ColumnBufs,
    w: &mut SerializedColumnWriter<'_>,
) -> Result<(), ParquetError> {
    let present = !matches!(value, Constant::Null);
    let batch = rows.min(CONSTANT_BATCH);
    scratch.defs.clear();
    scratch.defs.resize(batch, i16::from(present));
    let n = if present { batch } else { 0 };
    match value {
        Constant::I32(v) => {
            scratch.i32s.clear();
            scratch.i32s.resize(n, *v);
        }
        Constant::I64(v) => {
            scratch.i64s.clear();
            scratch.i64s.resize(n, *v);
        }
        Constant::Str(v) => {
            scratch.bytes.clear();
            scratch.bytes.resize(n, v.clone());
        }
        Constant::Null => {}
    }
    let mut left = rows;
    while left > 0 {
        let k = left.min(batch);
        let defs = ty.nullable().then(|| &scratch.defs[..k]);
        let m = if present { k } else { 0 };
        match (value, ty.physical()) {
            (Constant::I32(v), _) => batch_of::<Int32Type>(w, &scratch.i32s[..m], defs, Some(v))?,
            (Constant::I64(v), _) => batch_of::<Int64Type>(w, &scratch.i64s[..m], defs, Some(v))?,
            (Constant::Str(v), _) => {
                batch_of::<ByteArrayType>(w, &scratch.bytes[..m], defs, Some(v))?
            }
            (Constant::Null, PhysicalType::INT32) => batch_of::<Int32Type>(w, &[], defs, None)?,
            (Constant::Null, PhysicalType::INT64) => batch_of::<Int64Type>(w, &[], defs, None)?,
            (Constant::Null, _) => batch_of::<ByteArrayType>(w, &[], defs, None)?,
        }
        left -= k;
    }
    Ok(())
}

/// One batch of a constant column through the crate's writer of `T`: with the
/// value as its statistics (one distinct value), or NULLs only (`value` None).
fn batch_of<T: DataType>(
    w: &mut SerializedColumnWriter<'_>,
    values: &[T::T],
    defs: Option<&[i16]>,
    value: Option<&T::T>,
) -> Result<(), ParquetError> {
    let t = w.typed::<T>();
    match value {
        Some(v) => t.write_batch_with_statistics(values, defs, None, Some(v), Some(v), Some(1))?,
        None => t.write_batch(values, defs, None)?,
    };
    Ok(())
}
