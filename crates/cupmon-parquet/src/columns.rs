//! Column buffers: the rows of one row group, a typed vector per column, written
//! in a given row order (rows are sorted by time before they are written). A
//! dictionary column is written with cupmon's own pages ([`crate::dict_columns`]),
//! the others with the parquet crate's column writer.

use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use rustc_hash::FxHashMap;

use crate::dictionary::LocalDict;
use crate::pages::PageScratch;
use crate::row_group::RowGroupOut;
use crate::schema::{ColType, Enc};
use crate::{delta_columns, dict_columns};

/// A string of a [`Strings`] pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Sym(u32);

/// The distinct strings of an export (kernel names, API names, copy kinds), each
/// stored once; rows hold [`Sym`]s.
#[derive(Debug, Default)]
pub struct Strings {
    values: Vec<ByteArray>,
    index: FxHashMap<Box<str>, Sym>,
}

impl Strings {
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&sym) = self.index.get(s) {
            return sym;
        }
        let sym = Sym(self.values.len() as u32);
        self.values.push(ByteArray::from(s.as_bytes().to_vec()));
        self.index.insert(s.into(), sym);
        sym
    }

    pub(crate) fn get(&self, sym: Sym) -> &ByteArray {
        &self.values[sym.0 as usize]
    }

    /// Strings so far: every [`Sym`] is below this.
    pub fn len(&self) -> usize {
        self.values.len()
    }
}

impl Sym {
    /// The dense id (0, 1, 2, ... in the order the strings were interned).
    pub(crate) fn id(self) -> u32 {
        self.0
    }

    pub(crate) fn from_id(id: u32) -> Self {
        Self(id)
    }
}

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
#[derive(Debug)]
pub struct WriteCtx<'a> {
    /// Row order (indices into the buffer); `None`: as pushed.
    pub order: Option<&'a [u32]>,
    pub strings: &'a Strings,
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

/// `values` in `order`, into `out`.
pub(crate) fn gather<T: Copy>(values: &[T], order: &[u32], out: &mut Vec<T>) {
    out.clear();
    out.extend(order.iter().map(|&i| values[i as usize]));
}

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
    let mut one = |v: Option<T>| match v {
        Some(v) => {
            out.push(map(v));
            defs.push(1);
        }
        None => defs.push(0),
    };
    match order {
        Some(order) => order.iter().for_each(|&i| one(values[i as usize])),
        None => values.iter().for_each(|&v| one(v)),
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
        }
    };
}

macro_rules! plain_column {
    ($name:ident, $t:ty, $ty:ident, $parquet:ty, $scratch:ident, $delta:ident) => {
        #[derive(Debug, Default)]
        pub struct $name(pub Vec<$t>);

        impl $name {
            #[inline]
            pub fn push(&mut self, v: $t) {
                self.0.push(v);
            }
        }

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
                let values = match ctx.order {
                    // Rows already in time order: no copy.
                    None => &self.0[..],
                    Some(order) => {
                        gather(&self.0, order, &mut scratch.$scratch);
                        &scratch.$scratch[..]
                    }
                };
                out.with_writer(|w| {
                    w.typed::<$parquet>().write_batch(values, None, None)?;
                    Ok(())
                })
            }
        }
    };
}

plain_column!(I32Col, i32, I32, Int32Type, i32s, no_delta);
plain_column!(I64Col, i64, I64, Int64Type, i64s, own_delta);

/// An INT64 column as cupmon's own delta pages.
fn own_delta(
    values: &[i64],
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

/// A boolean column (few rows: the `dumps` dataset).
#[derive(Debug, Default)]
pub struct BoolCol(pub Vec<bool>);

impl BoolCol {
    pub fn push(&mut self, v: bool) {
        self.0.push(v);
    }
}

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
        let values = match ctx.order {
            None => &self.0[..],
            Some(order) => {
                gather(&self.0, order, &mut scratch.bools);
                &scratch.bools[..]
            }
        };
        out.with_writer(|w| {
            w.typed::<BoolType>().write_batch(values, None, None)?;
            Ok(())
        })
    }
}

/// A nullable INT64 column: the values (0 where NULL) and whether each is present,
/// so that the usual all-present column is written without building anything.
/// While every row is NULL (no graph, no queued time, no trace window: the usual
/// case) nothing is stored but the count: a row costs no memory and no store.
#[derive(Debug, Default)]
pub struct OptI64Col {
    len: usize,
    /// Every row's value and presence, or empty while every row is NULL.
    values: Vec<i64>,
    present: Vec<bool>,
    nulls: usize,
}

impl OptI64Col {
    #[inline]
    pub fn push(&mut self, v: Option<i64>) {
        if v.is_none() && self.values.is_empty() {
            self.len += 1;
            self.nulls += 1;
            return;
        }
        self.store();
        self.values.push(v.unwrap_or(0));
        self.present.push(v.is_some());
        self.nulls += usize::from(v.is_none());
        self.len += 1;
    }

    /// Store the NULL rows so far (the first value came).
    fn store(&mut self) {
        if self.values.len() < self.len {
            self.values.resize(self.len, 0);
            self.present.resize(self.len, false);
        }
    }

    /// Row `i`.
    #[cfg(test)]
    pub fn get(&self, i: usize) -> Option<i64> {
        self.present
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| self.values[i])
    }

    /// Set row `i`, which was NULL.
    pub fn fill(&mut self, i: usize, v: i64) {
        self.store();
        if !self.present[i] {
            self.values[i] = v;
            self.present[i] = true;
            self.nulls -= 1;
        }
    }
}

impl Column for OptI64Col {
    const TYPE: ColType = ColType::OptI64;
    fn len(&self) -> usize {
        self.len
    }
    fn clear(&mut self) {
        self.len = 0;
        self.values.clear();
        self.present.clear();
        self.nulls = 0;
    }
    fn reserve(&mut self, additional: usize) {
        if !self.values.is_empty() {
            self.values.reserve_exact(additional);
            self.present.reserve_exact(additional);
        }
    }
    fn write(
        &self,
        enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let n = self.len;
        let present = Some((&self.present[..], self.nulls));
        if enc == Enc::Dict && dict_columns::ints(&self.values, n, present, ctx, scratch, out)? {
            return Ok(());
        }
        if enc == Enc::Delta && delta_columns::ints(&self.values, n, present, ctx, scratch, out)? {
            return Ok(());
        }
        let Scratch { i64s, defs, .. } = scratch;
        defs.clear();
        let values: &[i64] = if self.nulls == n {
            // All NULL: levels only.
            defs.resize(n, 0);
            &[]
        } else if self.nulls == 0 {
            defs.resize(n, 1);
            match ctx.order {
                None => &self.values,
                Some(order) => {
                    gather(&self.values, order, i64s);
                    i64s
                }
            }
        } else {
            i64s.clear();
            let mut one = |i: usize| {
                if self.present[i] {
                    i64s.push(self.values[i]);
                    defs.push(1);
                } else {
                    defs.push(0);
                }
            };
            match ctx.order {
                None => (0..n).for_each(&mut one),
                Some(order) => order.iter().for_each(|&i| one(i as usize)),
            }
            i64s
        };
        out.with_writer(|w| {
            w.typed::<Int64Type>()
                .write_batch(values, Some(defs), None)?;
            Ok(())
        })
    }
}

/// A string column: [`Sym`]s of the export's [`Strings`].
#[derive(Debug, Default)]
pub struct StrCol(pub Vec<Sym>);

impl StrCol {
    #[inline]
    pub fn push(&mut self, v: Sym) {
        self.0.push(v);
    }
}

impl Column for StrCol {
    const TYPE: ColType = ColType::Str;
    vec_column_basics!();
    fn write(
        &self,
        enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        if enc == Enc::Dict && dict_columns::strings(&self.0, self.0.len(), ctx, scratch, out)? {
            return Ok(());
        }
        let bytes = &mut scratch.bytes;
        bytes.clear();
        let value = |s: Sym| ctx.strings.get(s).clone();
        match ctx.order {
            Some(order) => bytes.extend(order.iter().map(|&i| value(self.0[i as usize]))),
            None => bytes.extend(self.0.iter().map(|&s| value(s))),
        }
        out.with_writer(|w| {
            w.typed::<ByteArrayType>().write_batch(bytes, None, None)?;
            Ok(())
        })
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
    fn write(
        &self,
        enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        if enc == Enc::Dict && dict_columns::strings(&self.values, self.len, ctx, scratch, out)? {
            return Ok(());
        }
        let Scratch { bytes, defs, .. } = scratch;
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
        out.with_writer(|w| {
            w.typed::<ByteArrayType>()
                .write_batch(bytes, Some(defs), None)?;
            Ok(())
        })
    }
}
