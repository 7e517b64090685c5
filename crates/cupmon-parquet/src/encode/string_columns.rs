//! The string columns ([`StrCol`], [`OptStrCol`]): [`Sym`]s of the export's
//! [`Strings`](super::symbols::Strings), written as dictionary columns with cupmon's own pages
//! ([`super::dict_chunks::string_chunk`]); the `dumps` dataset's PLAIN strings and
//! any column the file wants from the parquet crate go through its writer.

use parquet::data_type::ByteArrayType;
use parquet::errors::ParquetError;

use super::column::{
    each, vec_column, vec_column_basics, Column, ColumnBufs, Encode, OwnPages, WriteCtx,
};
use super::dict_chunks::string_chunk;
use super::pages::Chunk;
use super::row_group::RowGroupOut;
use super::symbols::Sym;
use super::types::ColType;

/// The non-null values of `values` in `order` into `out`, and a definition level
/// per row (1 present, 0 null) into `defs`.
fn gather_opt<T: Copy, U>(
    values: &[Option<T>],
    order: Option<&[u32]>,
    map: impl Fn(T) -> U,
    out: &mut Vec<U>,
    defs: &mut Vec<i16>,
) {
    out.clear();
    defs.clear();
    each(values, order, |v| match v {
        Some(v) => {
            out.push(map(v));
            defs.push(1);
        }
        None => defs.push(0),
    });
}

vec_column!(
    /// A string column: [`Sym`]s of the export's [`Strings`](super::symbols::Strings).
    StrCol,
    Sym
);

impl Column for StrCol {
    const TYPE: ColType = ColType::Str;
    vec_column_basics!();
}

impl Encode for StrCol {
    fn dictionary<'a>(
        &'a self,
        own: &OwnPages<'a>,
        ctx: &WriteCtx<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        string_chunk(&self.0, self.0.len(), own, ctx, bufs)
    }

    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let bytes = &mut bufs.bytes;
        bytes.clear();
        let value = |s: Sym| ctx.strings.get(s).clone();
        match ctx.order {
            Some(order) => bytes.extend(order.iter().map(|&i| value(self.0[i as usize]))),
            None => bytes.extend(self.0.iter().map(|&s| value(s))),
        }
        out.write_batch::<ByteArrayType>(bytes, None)
    }
}

/// A nullable string column; like [`OptI64Col`], nothing is stored while every row
/// is NULL (user annotations without trace windows, collectives of compute-only
/// processes).
#[derive(Debug, Default)]
pub struct OptStrCol {
    len: usize,
    /// Every row, or empty while every row is NULL.
    values: Vec<Option<Sym>>,
}

impl OptStrCol {
    #[inline]
    pub fn push(&mut self, v: Option<Sym>) {
        if v.is_some() || !self.values.is_empty() {
            self.store();
            self.values.push(v);
        }
        self.len += 1;
    }

    /// Store the NULL rows so far (the first value came).
    fn store(&mut self) {
        if self.values.len() < self.len {
            self.values.resize(self.len, None);
        }
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> Option<Sym> {
        self.values.get(i).copied().flatten()
    }

    /// Set row `i`.
    pub fn set(&mut self, i: usize, v: Sym) {
        self.store();
        self.values[i] = Some(v);
    }
}

impl Column for OptStrCol {
    const TYPE: ColType = ColType::OptStr;
    fn len(&self) -> usize {
        self.len
    }
    fn clear(&mut self) {
        self.len = 0;
        self.values.clear();
    }
    fn reserve(&mut self, additional: usize) {
        if !self.values.is_empty() {
            self.values.reserve_exact(additional);
        }
    }
}

impl Encode for OptStrCol {
    fn dictionary<'a>(
        &'a self,
        own: &OwnPages<'a>,
        ctx: &WriteCtx<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        string_chunk(&self.values, self.len, own, ctx, bufs)
    }

    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let ColumnBufs { bytes, defs, .. } = bufs;
        let strings = ctx.strings;
        if self.values.iter().all(Option::is_none) {
            // All NULL: levels only, no per-row gather.
            bytes.clear();
            defs.clear();
            defs.resize(self.len, 0);
        } else {
            gather_opt(
                &self.values,
                ctx.order,
                |s| strings.get(s).clone(),
                bytes,
                defs,
            );
        }
        out.write_batch::<ByteArrayType>(bytes, Some(defs))
    }
}
