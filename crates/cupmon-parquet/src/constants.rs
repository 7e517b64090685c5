//! The run columns' values (job, host, rank, ...): the same in every row of a
//! file. A dictionary column of them is one entry and an RLE run per page, written
//! by cupmon ([`crate::dict_pages`]); the others go through the parquet crate's
//! writer a batch at a time from one small buffer, so a million rows clone nothing.

use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::writer::SerializedColumnWriter;

use crate::columns::Scratch;
use crate::dict_pages::{Chunk, Indices, Levels};
use crate::dictionary::int_statistics;
use crate::row_group::RowGroupOut;
use crate::schema::{ColType, Enc};

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
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<(), ParquetError> {
    if enc == Enc::Dict && own_dictionary(value, rows, scratch, out)? {
        return Ok(());
    }
    out.with_writer(|w| with_crate(ty, value, rows, scratch, w))
}

/// `value` as a one-entry dictionary page and a run per data page; false when the
/// file wants the crate's writer for this column.
fn own_dictionary(
    value: &Constant,
    rows: usize,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    let Some(settings) = out.own_dictionary()? else {
        return Ok(false);
    };
    let descr = out.descr()?;
    let optional = descr.max_def_level() > 0;
    let plain = &mut scratch.plain;
    plain.clear();
    let (levels, range) = match value {
        Constant::Null if !optional => return Ok(false),
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
    let statistics = (out.statistics()? && !matches!(value, Constant::Str(_)))
        .then(|| int_statistics(&descr, range, nulls as u64));
    let chunk = Chunk {
        descr: &descr,
        rows,
        levels,
        indices: Indices::Zero,
        dictionary: plain,
        entries: usize::from(nulls == 0),
        statistics,
        nulls: nulls as u64,
    };
    let (bytes, close) = scratch.pages.write(&chunk, settings)?;
    out.append(bytes, close)?;
    Ok(true)
}

/// Values written per call for a constant column.
const CONSTANT_BATCH: usize = 8192;

/// `value` in each of `rows` rows through the crate's column writer.
fn with_crate(
    ty: ColType,
    value: &Constant,
    rows: usize,
    scratch: &mut Scratch,
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
            (Constant::I32(v), _) => {
                w.typed::<Int32Type>().write_batch_with_statistics(
                    &scratch.i32s[..m],
                    defs,
                    None,
                    Some(v),
                    Some(v),
                    Some(1),
                )?;
            }
            (Constant::I64(v), _) => {
                w.typed::<Int64Type>().write_batch_with_statistics(
                    &scratch.i64s[..m],
                    defs,
                    None,
                    Some(v),
                    Some(v),
                    Some(1),
                )?;
            }
            (Constant::Str(v), _) => {
                w.typed::<ByteArrayType>().write_batch_with_statistics(
                    &scratch.bytes[..m],
                    defs,
                    None,
                    Some(v),
                    Some(v),
                    Some(1),
                )?;
            }
            (Constant::Null, parquet::basic::Type::INT32) => {
                w.typed::<Int32Type>().write_batch(&[], defs, None)?;
            }
            (Constant::Null, parquet::basic::Type::INT64) => {
                w.typed::<Int64Type>().write_batch(&[], defs, None)?;
            }
            (Constant::Null, _) => {
                w.typed::<ByteArrayType>().write_batch(&[], defs, None)?;
            }
        }
        left -= k;
    }
    Ok(())
}
