//! The rows of one dataset waiting to be written, and the `dataset!` macro that
//! declares a dataset once: its column buffers, its [`DatasetSpec`] and how a row
//! group is written.

use parquet::errors::ParquetError;

use crate::encode::RowGroupOut;
use crate::encode::{Scratch, WriteCtx};
use crate::schema::DatasetSpec;

/// The buffered rows of one dataset.
pub trait Rows: Default + std::fmt::Debug + 'static {
    const SPEC: DatasetSpec;
    fn len(&self) -> usize;
    fn clear(&mut self);
    /// Room for `additional` more rows in every column.
    fn reserve(&mut self, additional: usize);
    /// Rows the buffers have room for.
    fn room(&self) -> usize;
    /// Each row's time (Unix ns): rows are sorted and partitioned by it.
    fn time(&self) -> &[i64];
    /// Write the dataset's own columns (after the run columns) into `out`.
    fn write_own(
        &self,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError>;
}

/// A row group's buffers are kept for the next export ([`crate::pool`]).
impl<R: Rows> crate::pool::Reusable for R {
    fn clear(&mut self) {
        Rows::clear(self);
    }
    fn room(&self) -> usize {
        Rows::room(self)
    }
}

/// Declares a dataset: `dataset! { Name = "dir", time = column, "doc", { col: Type
/// [Enc] "doc", ... } }` gives `struct Name` with a public buffer per column
/// (`I64Col`, `StrCol`, ...) and its [`Rows`] implementation. With `shapes =
/// field`, the struct also holds a [`crate::encode::ShapeTable`] for its
/// `Shaped` columns.
macro_rules! dataset {
    (
        $(#[$meta:meta])*
        $name:ident = $dir:literal, time = $time:ident, $(shapes = $shapes:ident,)? $doc:literal,
        { $($col:ident : $ty:ty [$enc:ident] $cdoc:literal,)* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        pub struct $name {
            $(pub $col: $ty,)*
            $(pub $shapes: $crate::encode::ShapeTable,)?
        }

        impl $crate::table::Rows for $name {
            const SPEC: $crate::schema::DatasetSpec = $crate::schema::DatasetSpec {
                name: $dir,
                doc: $doc,
                columns: &[$($crate::schema::ColumnSpec {
                    name: stringify!($col),
                    ty: <$ty as $crate::encode::Column>::TYPE,
                    enc: $crate::schema::Enc::$enc,
                    doc: $cdoc,
                },)*],
            };

            fn len(&self) -> usize {
                $crate::encode::Column::len(&self.$time)
            }

            fn clear(&mut self) {
                $($crate::encode::Column::clear(&mut self.$col);)*
                $(self.$shapes.clear();)?
            }

            fn reserve(&mut self, additional: usize) {
                $($crate::encode::Column::reserve(&mut self.$col, additional);)*
                $(self.$shapes.reserve(additional);)?
            }

            fn room(&self) -> usize {
                self.$time.0.capacity()
            }

            fn time(&self) -> &[i64] {
                &self.$time.0
            }

            fn write_own(
                &self,
                ctx: &$crate::encode::WriteCtx<'_>,
                scratch: &mut $crate::encode::Scratch,
                out: &mut $crate::encode::RowGroupOut<'_, '_>,
            ) -> Result<(), parquet::errors::ParquetError> {
                #[allow(unused_mut)]
                let mut ctx = *ctx;
                $(
                    let shape_rows = self.$shapes.in_write_order(ctx.order);
                    ctx.shapes = Some(&shape_rows);
                )?
                let ctx = &ctx;
                $(
                    $crate::encode::Column::write(
                        &self.$col,
                        $crate::schema::Enc::$enc,
                        ctx,
                        scratch,
                        out,
                    )?;
                )*
                Ok(())
            }
        }
    };
}
pub(crate) use dataset;
