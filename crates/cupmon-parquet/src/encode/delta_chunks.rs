//! cupmon's DELTA_BINARY_PACKED chunks of the INT64 columns (times, durations,
//! ids that grow, [`super::delta`], [`super::pages`]): the rows' values taken in
//! write order once, or a page at a time, then encoded page by page. `None` for a
//! column that is not INT64 (the crate's writer takes it).

use parquet::basic::Type as PhysicalType;

use super::column::{each_row, nulls_and_mixed, ColumnBufs, OwnPages, WriteCtx};
use super::dictionary::{int_statistics, min_max};
use super::pages::{Chunk, Gather, Levels, Values};

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
pub fn delta_chunk<'a, T: DeltaValue>(
    values: &'a [T],
    rows: usize,
    present: Option<(&'a [bool], usize)>,
    own: &OwnPages<'a>,
    ctx: &WriteCtx<'a>,
    bufs: &'a mut ColumnBufs,
) -> Option<Chunk<'a>> {
    let descr = own.descr;
    if descr.physical_type() != PhysicalType::INT64 {
        return None;
    }
    let ColumnBufs { i64s, defs8, .. } = bufs;
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
            let range = all(i64s);
            (Values::Delta(i64s), Levels::Each(defs8), range)
        }
        (None, order) => {
            let levels = own.no_nulls();
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
                    let range = all(i64s);
                    (Values::Delta(i64s), levels, range)
                }
            }
        }
    };
    Some(Chunk {
        descr,
        rows,
        levels,
        values,
        statistics: own
            .statistics
            .then(|| int_statistics(descr, range, None, nulls as u64)),
        nulls: nulls as u64,
    })
}
