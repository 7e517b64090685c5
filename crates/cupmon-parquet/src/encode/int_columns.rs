//! The columns that are one `Vec` of integers or booleans ([`I32Col`], [`I64Col`],
//! [`U32Col`], [`BoolCol`]), written in a given row order (rows are sorted by time
//! before they are written): as cupmon's dictionary or delta pages, or through the
//! parquet crate's column writer.

use parquet::data_type::{BoolType, Int32Type, Int64Type};
use parquet::errors::ParquetError;

use super::column::{
    in_order, vec_column, vec_column_basics, Column, ColumnBufs, Encode, OwnPages, WriteCtx,
};
use super::delta_chunks::delta_chunk;
use super::dict_chunks::int_chunk;
use super::pages::Chunk;
use super::row_group::RowGroupOut;
use super::types::ColType;

/// The `Encode` methods that write a column of integers (`self.0`) as cupmon's own
/// dictionary pages, and delta pages where named: the same for every integer type.
macro_rules! own_pages {
    (dictionary $(, $delta:ident)?) => {
        fn dictionary<'a>(
            &'a self,
            own: &OwnPages<'a>,
            ctx: &WriteCtx<'a>,
            bufs: &'a mut ColumnBufs,
        ) -> Result<Option<Chunk<'a>>, ParquetError> {
            Ok(Some(int_chunk(&self.0, self.0.len(), None, own, ctx, bufs)))
        }
        $(own_pages!(@$delta);)?
    };
    (@delta) => {
        fn delta<'a>(
            &'a self,
            own: &OwnPages<'a>,
            ctx: &WriteCtx<'a>,
            bufs: &'a mut ColumnBufs,
        ) -> Result<Option<Chunk<'a>>, ParquetError> {
            Ok(delta_chunk(&self.0, self.0.len(), None, own, ctx, bufs))
        }
    };
}

vec_column!(
    /// An INT32 column (grid and block sizes, registers, shared memory).
    I32Col,
    i32
);

impl Column for I32Col {
    const TYPE: ColType = ColType::I32;
    vec_column_basics!();
}

/// INT32 deltas go through the crate's writer (no such column varies per row).
impl Encode for I32Col {
    own_pages!(dictionary);

    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let values = in_order(&self.0, ctx.order, &mut bufs.i32s);
        out.write_batch::<Int32Type>(values, None)
    }
}

vec_column!(
    /// An INT64 column (times, sizes, ids).
    I64Col,
    i64
);

impl Column for I64Col {
    const TYPE: ColType = ColType::I64;
    vec_column_basics!();
}

impl Encode for I64Col {
    own_pages!(dictionary, delta);

    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let values = in_order(&self.0, ctx.order, &mut bufs.i64s);
        out.write_batch::<Int64Type>(values, None)
    }
}

vec_column!(
    /// CUPTI's u32 ids (devices, contexts, streams, correlation ids) as INT64
    /// columns: half the memory, and half the stores per row, of an [`I64Col`].
    U32Col,
    u32
);

impl Column for U32Col {
    const TYPE: ColType = ColType::I64;
    vec_column_basics!();
}

impl Encode for U32Col {
    own_pages!(dictionary, delta);

    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let values = &mut bufs.i64s;
        values.clear();
        match ctx.order {
            None => values.extend(self.0.iter().map(|&v| i64::from(v))),
            Some(order) => values.extend(order.iter().map(|&i| i64::from(self.0[i as usize]))),
        }
        out.write_batch::<Int64Type>(values, None)
    }
}

vec_column!(
    /// A boolean column (few rows: the `dumps` dataset), always through the
    /// crate's writer.
    BoolCol,
    bool
);

impl Column for BoolCol {
    const TYPE: ColType = ColType::Bool;
    vec_column_basics!();
}

impl Encode for BoolCol {
    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let values = in_order(&self.0, ctx.order, &mut bufs.bools);
        out.write_batch::<BoolType>(values, None)
    }
}
