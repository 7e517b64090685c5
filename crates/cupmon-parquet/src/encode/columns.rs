//! Column buffers: the rows of one row group, a typed vector per column, written
//! in a given row order (rows are sorted by time before they are written). A
//! dictionary column is written with cupmon's own pages ([`crate::encode::dict_columns`]),
//! the others with the parquet crate's column writer.

use parquet::data_type::{BoolType, ByteArray, Int32Type, Int64Type};
use parquet::errors::ParquetError;

use crate::encode::dictionary::LocalDict;
use crate::encode::pages::PageScratch;
use crate::encode::row_group::RowGroupOut;
use crate::schema::{ColType, Enc};
use crate::encode::{delta_columns, dict_columns};

pub use crate::encode::opt_column::OptI64Col;
pub use crate::encode::strings::{OptStrCol, StrCol, Strings, Sym};

/// Reused buffers for writing columns in row order.
#[derive(Debug, Default)]
pub struct Scratch {
    pub(crate) i32s: Vec<i32>,
    pub(crate) i64s: Vec<i64>,
    bools: Vec<bool>,
    pub(crate) bytes: Vec<ByteArray>,
    pub(crate) defs: Vec<i16>,
    /// Cupmon's dictionary columns: the chunk's dictionary, its definition levels
    /// (1 present, 0 NULL), its PLAIN dictionary page, the page buffers.
    pub(crate) dict: LocalDict,
    pub(crate) defs8: Vec<u8>,
    pub(crate) plain: Vec<u8>,
    pub(crate) pages: PageScratch,
    /// A row group's write order: its sort buffers, then the rows.
    pub(crate) row_order: crate::row_order::RowOrder,
    pub(crate) rows_in_order: Vec<u32>,
    /// Per launch shape, its dictionary index in the column being written.
    pub(crate) shape_slots: Vec<u32>,
}

/// Kept for the next export, like the row buffers (every buffer is cleared before
/// it is used).
impl crate::pool::Reusable for Scratch {
    fn clear(&mut self) {}
    fn room(&self) -> usize {
        self.rows_in_order.capacity()
    }
}

/// What a column writer needs to write one column of a row group.
#[derive(Debug, Clone, Copy)]
pub struct WriteCtx<'a> {
    /// Row order (indices into the buffer); `None`: as pushed.
    pub order: Option<&'a [u32]>,
    pub strings: &'a Strings,
    /// The rows' launch shapes, in a dataset that has them (kernels).
    pub shapes: Option<&'a crate::encode::shapes::ShapeRows<'a>>,
}

/// A column buffer of one [`ColType`].
pub trait Column: Default + std::fmt::Debug {
    const TYPE: ColType;
    fn len(&self) -> usize;
    fn clear(&mut self);
    fn reserve(&mut self, additional: usize);
    /// Write the rows as the next column of `out`, encoded as `enc` says.
    fn write(
        &self,
        enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError>;
}

/// `values` in write order: themselves when the rows are already in it (no copy),
/// else gathered into `buf`.
pub(crate) fn in_order<'v, T: Copy>(
    values: &'v [T],
    order: Option<&[u32]>,
    buf: &'v mut Vec<T>,
) -> &'v [T] {
    match order {
        None => values,
        Some(order) => {
            buf.clear();
            buf.extend(order.iter().map(|&i| values[i as usize]));
            buf
        }
    }
}

/// `len`, `clear` and `reserve` of a [`Column`] that is one `Vec` (`self.0`).
macro_rules! vec_column_basics {
    () => {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn clear(&mut self) {
            self.0.clear();
        }
        fn reserve(&mut self, additional: usize) {
            self.0.reserve_exact(additional);
            cupmon_hugepages::advise_spare(&mut self.0);
        }
    };
}

pub(crate) use vec_column_basics;

/// A column buffer that is one `Vec<$t>` (`self.0`): the struct and its `push`.
macro_rules! vec_column {
    ($(#[$attr:meta])* $name:ident, $t:ty) => {
        $(#[$attr])*
        #[derive(Debug, Default)]
        pub struct $name(pub Vec<$t>);

        impl $name {
            #[inline]
            pub fn push(&mut self, v: $t) {
                self.0.push(v);
            }
        }
    };
}

pub(crate) use vec_column;

macro_rules! plain_column {
    ($name:ident, $t:ty, $ty:ident, $parquet:ty, $scratch:ident, $delta:ident) => {
        vec_column!($name, $t);

        impl Column for $name {
            const TYPE: ColType = ColType::$ty;
            vec_column_basics!();
            fn write(
                &self,
                enc: Enc,
                ctx: &WriteCtx<'_>,
                scratch: &mut Scratch,
                out: &mut RowGroupOut<'_, '_>,
            ) -> Result<(), ParquetError> {
                if enc == Enc::Dict
                    && dict_columns::ints(&self.0, self.0.len(), None, ctx, scratch, out)?
                {
                    return Ok(());
                }
                if enc == Enc::Delta && $delta(&self.0, ctx, scratch, out)? {
                    return Ok(());
                }
                let values = in_order(&self.0, ctx.order, &mut scratch.$scratch);
                out.write_batch::<$parquet>(values, None)
            }
        }
    };
}

plain_column!(I32Col, i32, I32, Int32Type, i32s, no_delta);
plain_column!(I64Col, i64, I64, Int64Type, i64s, own_delta);

vec_column!(
    /// CUPTI's u32 ids (devices, contexts, streams, correlation ids) as INT64
    /// columns: half the memory, and half the stores per row, of an [`I64Col`].
    U32Col,
    u32
);

impl Column for U32Col {
    const TYPE: ColType = ColType::I64;
    vec_column_basics!();
    fn write(
        &self,
        enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let rows = self.0.len();
        if enc == Enc::Dict && dict_columns::ints(&self.0, rows, None, ctx, scratch, out)? {
            return Ok(());
        }
        if enc == Enc::Delta && own_delta(&self.0, ctx, scratch, out)? {
            return Ok(());
        }
        let values = &mut scratch.i64s;
        values.clear();
        match ctx.order {
            None => values.extend(self.0.iter().map(|&v| i64::from(v))),
            Some(order) => values.extend(order.iter().map(|&i| i64::from(self.0[i as usize]))),
        }
        out.write_batch::<Int64Type>(values, None)
    }
}

/// An INT64 column as cupmon's own delta pages.
fn own_delta<T: delta_columns::DeltaValue>(
    values: &[T],
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    delta_columns::ints(values, values.len(), None, ctx, scratch, out)
}

/// INT32 deltas go through the crate's writer (no such column varies per row).
fn no_delta(
    _: &[i32],
    _: &WriteCtx<'_>,
    _: &mut Scratch,
    _: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    Ok(false)
}

vec_column!(
    /// A boolean column (few rows: the `dumps` dataset).
    BoolCol,
    bool
);

impl Column for BoolCol {
    const TYPE: ColType = ColType::Bool;
    vec_column_basics!();
    fn write(
        &self,
        _enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let values = in_order(&self.0, ctx.order, &mut scratch.bools);
        out.write_batch::<BoolType>(values, None)
    }
}
