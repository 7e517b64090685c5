//! How any column of a row group is written, once for every column type: the
//! encode-and-fall-back ladder ([`write_column`]). A column says how cupmon's own
//! pages hold it ([`Encode::dictionary`], [`Encode::delta`]) and how the parquet
//! crate's column writer takes it ([`Encode::with_crate`]); the ladder asks the
//! file whether it takes cupmon's pages for the column ([`RowGroupOut::own_pages`]),
//! asks the column for its chunk, writes the chunk's pages and splices them in, and
//! otherwise hands the column to the crate's writer. Also here: the reused buffers
//! ([`Scratch`]), what every column writer is given ([`WriteCtx`]), and the helpers
//! that walk a column's rows in write order.

use parquet::data_type::ByteArray;
use parquet::errors::ParquetError;
use parquet::schema::types::ColumnDescPtr;

use super::dictionary::LocalDict;
use super::pages::{Chunk, Levels, PageScratch};
use super::row_group::RowGroupOut;
use super::shape_table::ShapeRows;
use super::symbols::Strings;
use super::types::{ColType, Enc};

/// Reused buffers for writing columns in row order.
#[derive(Debug, Default)]
pub struct Scratch {
    /// What a column's chunk or batch is built in.
    pub(crate) bufs: ColumnBufs,
    /// Page buffers and the zstd context of cupmon's own pages.
    pub(crate) pages: PageScratch,
    /// A row group's write order: its sort buffers, then the rows.
    pub(crate) row_order: crate::row_order::RowOrder,
    pub(crate) rows_in_order: Vec<u32>,
}

/// The buffers a column's values are gathered or mapped into before they are
/// written (a chunk of cupmon's pages borrows them until its pages are written).
#[derive(Debug, Default)]
pub struct ColumnBufs {
    pub(crate) i32s: Vec<i32>,
    pub(crate) i64s: Vec<i64>,
    pub(crate) bools: Vec<bool>,
    pub(crate) bytes: Vec<ByteArray>,
    pub(crate) defs: Vec<i16>,
    /// Cupmon's dictionary columns: the chunk's dictionary, its definition levels
    /// (1 present, 0 NULL), its PLAIN dictionary page.
    pub(crate) dict: LocalDict,
    pub(crate) defs8: Vec<u8>,
    pub(crate) plain: Vec<u8>,
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
    pub shapes: Option<&'a ShapeRows<'a>>,
}

/// The next column, when the file takes cupmon's own pages for it.
#[derive(Debug)]
pub struct OwnPages<'a> {
    pub descr: &'a ColumnDescPtr,
    /// Whether the column keeps chunk statistics.
    pub statistics: bool,
    /// Largest dictionary page (bytes) before the crate's writer would fall back
    /// to PLAIN pages: a larger one is left to the crate's writer, which does.
    pub dictionary_limit: usize,
}

impl OwnPages<'_> {
    /// The definition levels of a chunk without NULLs.
    pub fn no_nulls(&self) -> Levels<'static> {
        if self.descr.max_def_level() > 0 {
            Levels::AllPresent
        } else {
            Levels::Required
        }
    }
}

/// How a column's values are written. A chunk is `None` when cupmon's pages cannot
/// hold it as the crate's writer would (the column then goes to the crate's writer).
pub trait Encode {
    /// The column as a dictionary chunk of cupmon's pages.
    fn dictionary<'a>(
        &'a self,
        _own: &OwnPages<'a>,
        _ctx: &WriteCtx<'a>,
        _bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        Ok(None)
    }

    /// The column as a DELTA_BINARY_PACKED chunk of cupmon's pages.
    fn delta<'a>(
        &'a self,
        _own: &OwnPages<'a>,
        _ctx: &WriteCtx<'a>,
        _bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        Ok(None)
    }

    /// The column through the parquet crate's column writer, which encodes it as
    /// the file's properties say.
    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError>;
}

/// Write `column` as the next column of `out`, encoded as `enc` says: as cupmon's
/// own pages where the file takes them and the column gives a chunk, else through
/// the parquet crate's writer. The one ladder of every column type.
pub fn write_column<C: Encode + ?Sized>(
    column: &C,
    enc: Enc,
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<(), ParquetError> {
    let dictionary = match enc {
        Enc::Dict => true,
        Enc::Delta => false,
        Enc::Plain => return column.with_crate(ctx, &mut scratch.bufs, out),
    };
    if let Some(settings) = out.own_pages(dictionary)? {
        let descr = out.descr()?;
        let own = OwnPages {
            descr: &descr,
            statistics: out.statistics()?,
            dictionary_limit: out.dictionary_limit()?,
        };
        let Scratch { bufs, pages, .. } = scratch;
        let chunk = if dictionary {
            column.dictionary(&own, ctx, bufs)?
        } else {
            column.delta(&own, ctx, bufs)?
        };
        if let Some(chunk) = chunk {
            let (bytes, close) = pages.write(&chunk, settings)?;
            return out.append(bytes, close);
        }
    }
    column.with_crate(ctx, &mut scratch.bufs, out)
}

/// A column buffer of one [`ColType`].
pub trait Column: Encode + Default + std::fmt::Debug {
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
    ) -> Result<(), ParquetError> {
        write_column(self, enc, ctx, scratch, out)
    }
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

/// `f` on each of `values` in write order.
#[inline]
pub fn each<T: Copy>(values: &[T], order: Option<&[u32]>, mut f: impl FnMut(T)) {
    match order {
        Some(order) => order.iter().for_each(|&i| f(values[i as usize])),
        None => values.iter().for_each(|&v| f(v)),
    }
}

/// `f` on each row index (`0..rows`) in write order.
#[inline]
pub fn each_row(order: Option<&[u32]>, rows: usize, mut f: impl FnMut(usize)) {
    match order {
        Some(order) => order.iter().for_each(|&i| f(i as usize)),
        None => (0..rows).for_each(f),
    }
}

/// Of a column of `rows` rows whose `present` flags say `nulls` are NULL: how many
/// are, and the flags when some rows are NULL and some are not.
pub fn nulls_and_mixed(present: Option<(&[bool], usize)>, rows: usize) -> (usize, Option<&[bool]>) {
    let nulls = present.map_or(0, |p| p.1);
    (
        nulls,
        present.filter(|_| nulls > 0 && nulls < rows).map(|p| p.0),
    )
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
