//! Strings: the export's pool of distinct strings, the [`Sym`]s rows hold, and
//! the string columns. Written as dictionary columns with cupmon's own pages
//! ([`crate::encode::dict_columns`]): a `Sym` is a dense id, so a chunk's dictionary index
//! is an array lookup; the `dumps` dataset's PLAIN strings go through the parquet
//! crate's writer.

use parquet::data_type::{ByteArray, ByteArrayType};
use parquet::errors::ParquetError;
use rustc_hash::FxHashMap;

use crate::encode::columns::{vec_column, vec_column_basics, Column, Scratch, WriteCtx};
use crate::encode::dict_columns;
use crate::encode::row_group::RowGroupOut;
use crate::schema::{ColType, Enc};

/// A string of a [`Strings`] pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Sym(u32);

/// The distinct strings of an export (kernel names, API names, copy kinds), each
/// stored once; rows hold [`Sym`]s.
#[derive(Debug, Default)]
pub struct Strings {
    values: Vec<ByteArray>,
    index: FxHashMap<Box<str>, Sym>,
    /// The word of each (table, value) of CUPTI's enums, interned once.
    words: FxHashMap<(u8, u16), Sym>,
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

    /// The string `word` makes of value `v` of enum table `table`: made and
    /// interned once per value, not per row (copy and memory kinds).
    #[inline]
    pub fn word(
        &mut self,
        table: u8,
        v: u16,
        word: impl FnOnce(u16) -> std::borrow::Cow<'static, str>,
    ) -> Sym {
        if let Some(&sym) = self.words.get(&(table, v)) {
            return sym;
        }
        let sym = self.intern(&word(v));
        self.words.insert((table, v), sym);
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
    dict_columns::each(values, order, |v| match v {
        Some(v) => {
            out.push(map(v));
            defs.push(1);
        }
        None => defs.push(0),
    });
}

vec_column!(
    /// A string column: [`Sym`]s of the export's [`Strings`].
    StrCol,
    Sym
);

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
        out.write_batch::<ByteArrayType>(bytes, Some(defs))
    }
}
