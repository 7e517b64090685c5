//! Column buffers: the rows of one row group, a typed vector per column, written
//! in a given row order (rows are sorted by time before they are written).

use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::writer::SerializedColumnWriter;
use rustc_hash::FxHashMap;

use crate::schema::ColType;

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

    fn get(&self, sym: Sym) -> &ByteArray {
        &self.values[sym.0 as usize]
    }
}

/// Reused buffers for writing columns in row order.
#[derive(Debug, Default)]
pub struct Scratch {
    i32s: Vec<i32>,
    i64s: Vec<i64>,
    bools: Vec<bool>,
    bytes: Vec<ByteArray>,
    defs: Vec<i16>,
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
    fn write(
        &self,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        w: &mut SerializedColumnWriter<'_>,
    ) -> Result<(), ParquetError>;
}

/// `values` in `order`, into `out`.
fn gather<T: Copy>(values: &[T], order: Option<&[u32]>, out: &mut Vec<T>) {
    out.clear();
    match order {
        Some(order) => out.extend(order.iter().map(|&i| values[i as usize])),
        None => out.extend_from_slice(values),
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

macro_rules! plain_column {
    ($name:ident, $t:ty, $ty:ident, $parquet:ty, $scratch:ident) => {
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
            fn len(&self) -> usize {
                self.0.len()
            }
            fn clear(&mut self) {
                self.0.clear();
            }
            fn write(
                &self,
                ctx: &WriteCtx<'_>,
                scratch: &mut Scratch,
                w: &mut SerializedColumnWriter<'_>,
            ) -> Result<(), ParquetError> {
                gather(&self.0, ctx.order, &mut scratch.$scratch);
                w.typed::<$parquet>()
                    .write_batch(&scratch.$scratch, None, None)?;
                Ok(())
            }
        }
    };
}

macro_rules! optional_column {
    ($name:ident, $t:ty, $ty:ident, $parquet:ty, $scratch:ident) => {
        #[derive(Debug, Default)]
        pub struct $name(pub Vec<Option<$t>>);

        impl $name {
            #[inline]
            pub fn push(&mut self, v: Option<$t>) {
                self.0.push(v);
            }
        }

        impl Column for $name {
            const TYPE: ColType = ColType::$ty;
            fn len(&self) -> usize {
                self.0.len()
            }
            fn clear(&mut self) {
                self.0.clear();
            }
            fn write(
                &self,
                ctx: &WriteCtx<'_>,
                scratch: &mut Scratch,
                w: &mut SerializedColumnWriter<'_>,
            ) -> Result<(), ParquetError> {
                let Scratch {
                    $scratch, defs, ..
                } = scratch;
                gather_opt(&self.0, ctx.order, |v| v, $scratch, defs);
                w.typed::<$parquet>().write_batch($scratch, Some(defs), None)?;
                Ok(())
            }
        }
    };
}

plain_column!(I32Col, i32, I32, Int32Type, i32s);
plain_column!(I64Col, i64, I64, Int64Type, i64s);
plain_column!(BoolCol, bool, Bool, BoolType, bools);
optional_column!(OptI64Col, i64, OptI64, Int64Type, i64s);

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
    fn len(&self) -> usize {
        self.0.len()
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn write(
        &self,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        w: &mut SerializedColumnWriter<'_>,
    ) -> Result<(), ParquetError> {
        let out = &mut scratch.bytes;
        out.clear();
        let value = |s: Sym| ctx.strings.get(s).clone();
        match ctx.order {
            Some(order) => out.extend(order.iter().map(|&i| value(self.0[i as usize]))),
            None => out.extend(self.0.iter().map(|&s| value(s))),
        }
        w.typed::<ByteArrayType>().write_batch(out, None, None)?;
        Ok(())
    }
}

/// A nullable string column.
#[derive(Debug, Default)]
pub struct OptStrCol(pub Vec<Option<Sym>>);

impl OptStrCol {
    #[inline]
    pub fn push(&mut self, v: Option<Sym>) {
        self.0.push(v);
    }
}

impl Column for OptStrCol {
    const TYPE: ColType = ColType::OptStr;
    fn len(&self) -> usize {
        self.0.len()
    }
    fn clear(&mut self) {
        self.0.clear();
    }
    fn write(
        &self,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        w: &mut SerializedColumnWriter<'_>,
    ) -> Result<(), ParquetError> {
        let Scratch { bytes, defs, .. } = scratch;
        let strings = ctx.strings;
        gather_opt(&self.0, ctx.order, |s| strings.get(s).clone(), bytes, defs);
        w.typed::<ByteArrayType>()
            .write_batch(bytes, Some(defs), None)?;
        Ok(())
    }
}

/// The same value in every row, for the run columns (job, host, rank, ...).
pub fn write_constant(
    ty: ColType,
    value: &Constant,
    rows: usize,
    scratch: &mut Scratch,
    w: &mut SerializedColumnWriter<'_>,
) -> Result<(), ParquetError> {
    let present = !matches!(value, Constant::Null);
    scratch.defs.clear();
    scratch.defs.resize(rows, i16::from(present));
    let defs = ty.nullable().then_some(&scratch.defs[..]);
    let n = if present { rows } else { 0 };
    match value {
        Constant::Null => match ty.physical() {
            parquet::basic::Type::INT32 => {
                w.typed::<Int32Type>().write_batch(&[], defs, None)?;
            }
            parquet::basic::Type::INT64 => {
                w.typed::<Int64Type>().write_batch(&[], defs, None)?;
            }
            _ => {
                w.typed::<ByteArrayType>().write_batch(&[], defs, None)?;
            }
        },
        Constant::I32(v) => {
            scratch.i32s.clear();
            scratch.i32s.resize(n, *v);
            w.typed::<Int32Type>()
                .write_batch(&scratch.i32s, defs, None)?;
        }
        Constant::I64(v) => {
            scratch.i64s.clear();
            scratch.i64s.resize(n, *v);
            w.typed::<Int64Type>()
                .write_batch(&scratch.i64s, defs, None)?;
        }
        Constant::Str(v) => {
            scratch.bytes.clear();
            scratch.bytes.resize(n, v.clone());
            w.typed::<ByteArrayType>()
                .write_batch(&scratch.bytes, defs, None)?;
        }
    }
    Ok(())
}

/// A run column's value for a whole file.
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    Null,
    I32(i32),
    I64(i64),
    Str(ByteArray),
}
