//! The INT64 delta columns (times, durations, ids that grow) written with cupmon's
//! own DELTA_BINARY_PACKED pages ([`crate::encode::delta`], [`crate::encode::pages`]): the rows'
//! values gathered in write order once, then encoded page by page. Returns false,
//! having written nothing, when the file wants the parquet crate's writer for the
//! column (see [`RowGroupOut::own_pages`]).

use parquet::basic::Type as PhysicalType;
use parquet::errors::ParquetError;

use crate::encode::columns::{Scratch, WriteCtx};
use crate::encode::dict_columns::{each_row, no_nulls, nulls_and_mixed};
use crate::encode::dictionary::{int_statistics, min_max};
use crate::encode::pages::{Chunk, Gather, Levels, Values};
use crate::encode::row_group::RowGroupOut;

/// A value of a delta column's buffer.
pub trait DeltaValue: Copy + Ord + Into<i64> {
    /// The values themselves when they are i64s (written without a copy).
    fn as_i64s(_values: &[Self]) -> Option<&[i64]> {
        None
    }
    /// The values taken in `order`.
    fn gather<'a>(values: &'a [Self], order: &'a [u32]) -> Gather<'a>;
}

impl DeltaValue for i64 {
    fn as_i64s(values: &[i64]) -> Option<&[i64]> {
        Some(values)
    }
    fn gather<'a>(values: &'a [i64], order: &'a [u32]) -> Gather<'a> {
        Gather::I64 { values, order }
    }
}

impl DeltaValue for u32 {
    fn gather<'a>(values: &'a [u32], order: &'a [u32]) -> Gather<'a> {
        Gather::U32 { values, order }
    }
}

/// An INT64 column of `rows` rows (`present`: which rows are not NULL, `nulls` of
/// them are; `values` and `present` may be empty when every row is NULL).
pub fn ints<T: DeltaValue>(
    values: &[T],
    rows: usize,
    present: Option<(&[bool], usize)>,
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    let Some(settings) = out.own_pages(false)? else {
        return Ok(false);
    };
    let descr = out.descr()?;
    if descr.physical_type() != PhysicalType::INT64 {
        return Ok(false);
    }
    let Scratch { i64s, defs8, .. } = scratch;
    let (nulls, mixed) = nulls_and_mixed(present, rows);
    let all = |v: &[i64]| min_max(v.iter().copied());
    let (values, levels, range) = match (mixed, ctx.order) {
        _ if nulls == rows => (Values::Delta(&[]), Levels::AllNull, None),
        (Some(present), order) => {
            i64s.clear();
            defs8.clear();
            let one = |i: usize| {
                defs8.push(u8::from(present[i]));
                if present[i] {
                    i64s.push(values[i].into());
                }
            };
            each_row(order, rows, one);
            (Values::Delta(i64s), Levels::Each(defs8), all(i64s))
        }
        (None, order) => {
            let levels = no_nulls(descr.max_def_level() > 0);
            match (order, T::as_i64s(values)) {
                (None, Some(values)) => (Values::Delta(values), levels, all(values)),
                // The range is the rows', in whatever order.
                (Some(order), _) => {
                    let range = min_max(values.iter().copied()).map(|(a, b)| (a.into(), b.into()));
                    (Values::DeltaGather(T::gather(values, order)), levels, range)
                }
                (None, None) => {
                    i64s.clear();
                    i64s.extend(values.iter().map(|&v| v.into()));
                    (Values::Delta(i64s), levels, all(i64s))
                }
            }
        }
    };
    let statistics = out
        .statistics()?
        .then(|| int_statistics(&descr, range, None, nulls as u64));
    let chunk = Chunk {
        descr: &descr,
        rows,
        levels,
        values,
        statistics,
        nulls: nulls as u64,
    };
    let (bytes, close) = scratch.pages.write(&chunk, settings)?;
    out.append(bytes, close)?;
    Ok(true)
}
