//! Launch shapes: the columns of a kernel row that the launch fixes (name, device,
//! context, stream, grid, block, registers, shared memory) held once per distinct
//! combination, each row keeping only its shape's number. A training job launches
//! the same few shapes again and again (63 in the 885,097 kernels of the H200
//! recording, bench/parquet/RESULTS.md), so a row costs one hash lookup and
//! four bytes instead of thirteen pushes and 52 bytes, and a dictionary column of a
//! shape field maps each shape once, not each row (`shaped_ints`, `shaped_syms`).
//! The pages are the bytes the per-row columns gave: a dictionary lists its values
//! in the order of their first row, which is the first row of the first shape (in
//! write order) that has the value.

use parquet::errors::ParquetError;
use rustc_hash::FxHashMap;

use crate::encode::columns::{Column, I32Col, Scratch, StrCol, Sym, U32Col, WriteCtx};
use crate::encode::dict_columns::{int_dictionary, no_nulls};
use crate::encode::dictionary::{int_statistics, min_max};
use crate::encode::pages::{Chunk, Indices, Values};
use crate::encode::row_group::RowGroupOut;
use crate::schema::{ColType, Enc};

/// What a launch fixes of its kernel row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub name: Sym,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers_per_thread: i32,
    pub static_shared_memory: i32,
    pub dynamic_shared_memory: i32,
}

impl Shape {
    /// The fields that tell launches apart most often, as two words: what the hash
    /// and the direct-mapped slot take. Shapes that differ only in the other fields
    /// share them and are told apart by `Eq`.
    #[inline(always)]
    fn key(&self) -> [u64; 2] {
        [
            u64::from(self.name.id()) << 32 | u64::from(self.stream),
            (self.grid[0] as u32 as u64) << 32 | self.block[0] as u32 as u64,
        ]
    }

    /// A slot of [`ShapeTable`]'s direct-mapped array.
    #[inline(always)]
    fn slot(&self) -> usize {
        let [a, b] = self.key();
        let h = (a ^ b.rotate_left(17)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - SLOT_BITS)) as usize
    }
}

/// A shape is hashed for every row it is not found in its slot for, by [`Shape::key`].
impl std::hash::Hash for Shape {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let [a, b] = self.key();
        h.write_u64(a);
        h.write_u64(b);
    }
}

/// Slots of the direct-mapped array in front of the shape map: a training job's
/// few dozen shapes find their slot free, so a row's lookup is one multiply, one
/// load and one compare that succeeds (the map's probe mispredicted often enough to
/// be the most expensive part of taking a kernel row in).
const SLOT_BITS: u32 = 9;

/// The shapes of a row group's rows, and each row's shape.
#[derive(Debug)]
pub struct ShapeTable {
    /// Per row, its shape's index in `shapes`.
    rows: Vec<u32>,
    shapes: Vec<Shape>,
    index: FxHashMap<Shape, u32>,
    /// Per slot ([`Shape::slot`]), the index of a shape that hashes there, or
    /// `u32::MAX`.
    slots: Vec<u32>,
}

impl Default for ShapeTable {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            shapes: Vec::new(),
            index: FxHashMap::default(),
            slots: vec![u32::MAX; 1 << SLOT_BITS],
        }
    }
}

impl ShapeTable {
    #[inline]
    pub fn push(&mut self, shape: Shape) {
        let slot = shape.slot();
        let cached = self.slots[slot];
        let i = match self.shapes.get(cached as usize) {
            Some(s) if *s == shape => cached,
            _ => {
                let next = self.shapes.len() as u32;
                let i = *self.index.entry(shape).or_insert(next);
                if i == next {
                    self.shapes.push(shape);
                }
                self.slots[slot] = i;
                i
            }
        };
        self.rows.push(i);
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.shapes.clear();
        self.index.clear();
        self.slots.fill(u32::MAX);
    }

    pub fn reserve(&mut self, additional: usize) {
        self.rows.reserve_exact(additional);
        cupmon_hugepages::advise_spare(&mut self.rows);
    }

    /// Row `i`'s shape.
    #[cfg(test)]
    pub fn get(&self, i: usize) -> &Shape {
        &self.shapes[self.rows[i] as usize]
    }
}

/// One field of [`Shape`], written as the column it was.
pub trait ShapeField: std::fmt::Debug + Default {
    const TYPE: ColType;
    /// The field as the integer the column holds (a [`Sym`]'s id for the name).
    fn get(s: &Shape) -> i64;
    /// The rows' values as the per-row column wrote them (the crate's writer, when
    /// the file wants it: rare, so a copy).
    fn write_rows(
        table: &ShapeTable,
        enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError>;
}

/// A column of a [`ShapeField`], from the [`ShapeTable`] its write context carries.
#[derive(Debug, Default)]
pub struct Shaped<F: ShapeField>(std::marker::PhantomData<F>);

impl<F: ShapeField> Column for Shaped<F> {
    const TYPE: ColType = F::TYPE;
    /// The rows are counted by the table.
    fn len(&self) -> usize {
        0
    }
    fn clear(&mut self) {}
    fn reserve(&mut self, _: usize) {}
    fn write(
        &self,
        enc: Enc,
        ctx: &WriteCtx<'_>,
        scratch: &mut Scratch,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let shapes = ctx
            .shapes
            .ok_or_else(|| ParquetError::General("a shape column without shapes".to_owned()))?;
        if enc == Enc::Dict && shaped::<F>(shapes, ctx, scratch, out)? {
            return Ok(());
        }
        F::write_rows(shapes.table, enc, ctx, scratch, out)
    }
}

/// A row group's shapes in its write order: computed once for the thirteen
/// columns.
#[derive(Debug)]
pub struct ShapeRows<'a> {
    table: &'a ShapeTable,
    /// The write order of the rows ([`WriteCtx::order`]).
    order: Option<&'a [u32]>,
    /// The shapes in the order of their first row (in write order).
    first_seen: Vec<u32>,
}

impl ShapeTable {
    /// The rows' shapes in write order (`order`: as in [`WriteCtx::order`]).
    pub fn in_write_order<'a>(&'a self, order: Option<&'a [u32]>) -> ShapeRows<'a> {
        let mut seen = vec![false; self.shapes.len()];
        let mut first_seen = Vec::with_capacity(self.shapes.len());
        let mut see = |s: u32| {
            if !std::mem::replace(&mut seen[s as usize], true) {
                first_seen.push(s);
            }
        };
        match order {
            Some(order) => order.iter().for_each(|&i| see(self.rows[i as usize])),
            None => self.rows.iter().for_each(|&s| see(s)),
        }
        ShapeRows {
            table: self,
            order,
            first_seen,
        }
    }
}

impl ShapeRows<'_> {
    /// Rows in the row group.
    fn len(&self) -> usize {
        self.table.rows.len()
    }

    /// The `i`-th row's shape, in write order.
    #[cfg(test)]
    fn in_order(&self, i: usize) -> u32 {
        match self.order {
            Some(order) => self.table.rows[order[i] as usize],
            None => self.table.rows[i],
        }
    }
}

/// Per shape, its dictionary index: each shape's value looked up in the dictionary
/// (`index`) in the order of the shapes' first rows, which gives the values the
/// order of their first rows. A row's index is its shape's.
fn shape_map<F: ShapeField>(
    rows: &ShapeRows<'_>,
    of_shape: &mut Vec<u32>,
    mut index: impl FnMut(i64) -> u32,
) {
    of_shape.clear();
    of_shape.resize(rows.table.shapes.len(), 0);
    for &s in &rows.first_seen {
        of_shape[s as usize] = index(F::get(&rows.table.shapes[s as usize]));
    }
}

/// A shape field as a dictionary column, as `dict_columns::ints` and `strings`
/// write the per-row columns (false: the crate's writer, or a strings' dictionary
/// page past the file's limit).
fn shaped<F: ShapeField>(
    shapes: &ShapeRows<'_>,
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    let Some(settings) = out.own_pages(true)? else {
        return Ok(false);
    };
    let descr = out.descr()?;
    let rows = shapes.len();
    let Scratch {
        dict,
        plain,
        shape_slots,
        pages,
        ..
    } = scratch;
    let (each, statistics) = if F::TYPE == ColType::Str {
        dict.begin_syms(ctx.strings, rows);
        shape_map::<F>(shapes, shape_slots, |v| {
            dict.index_sym(Sym::from_id(v as u32))
        });
        dict.end();
        dict.plain_strings(ctx.strings, plain);
        if plain.len() > out.dictionary_limit()? {
            return Ok(false);
        }
        (true, None)
    } else {
        // Every shape of the table has a row of the row group.
        let range = min_max(shapes.table.shapes.iter().map(F::get));
        let each = int_dictionary(dict, range, rows, |dict| {
            shape_map::<F>(shapes, shape_slots, |v| dict.index_int(v));
        });
        dict.plain_ints(descr.physical_type(), plain);
        let statistics = out
            .statistics()?
            .then(|| int_statistics(&descr, range, None, 0));
        (each, statistics)
    };
    let chunk = Chunk {
        descr: &descr,
        rows,
        levels: no_nulls(descr.max_def_level() > 0),
        values: Values::Dictionary {
            dictionary: plain,
            entries: dict.entries(),
            indices: if each {
                Indices::Mapped {
                    rows: &shapes.table.rows,
                    order: shapes.order,
                    map: shape_slots,
                }
            } else {
                Indices::Zero
            },
        },
        statistics,
        nulls: 0,
    };
    let (bytes, close) = pages.write(&chunk, settings)?;
    out.append(bytes, close)?;
    Ok(true)
}

/// Declares a [`ShapeField`] `$name` for `Shape`'s `$get`, written as the column
/// type `$col` (holding `$t`) when the crate's writer writes it.
macro_rules! shape_field {
    ($name:ident, $col:ident, $t:ty, |$s:ident| $get:expr, |$v:ident| $back:expr) => {
        #[derive(Debug, Default)]
        pub struct $name;

        impl ShapeField for $name {
            const TYPE: ColType = <$col as Column>::TYPE;
            #[inline]
            fn get($s: &Shape) -> i64 {
                i64::from($get)
            }
            fn write_rows(
                table: &ShapeTable,
                enc: Enc,
                ctx: &WriteCtx<'_>,
                scratch: &mut Scratch,
                out: &mut RowGroupOut<'_, '_>,
            ) -> Result<(), ParquetError> {
                let values = table.rows.iter().map(|&s| {
                    let $v = Self::get(&table.shapes[s as usize]);
                    $back
                });
                let column = $col(values.collect::<Vec<$t>>());
                column.write(enc, ctx, scratch, out)
            }
        }
    };
}

shape_field!(Name, StrCol, Sym, |s| s.name.id(), |v| Sym::from_id(
    v as u32
));
shape_field!(Device, U32Col, u32, |s| s.device, |v| v as u32);
shape_field!(Context, U32Col, u32, |s| s.context, |v| v as u32);
shape_field!(Stream, U32Col, u32, |s| s.stream, |v| v as u32);
shape_field!(GridX, I32Col, i32, |s| s.grid[0], |v| v as i32);
shape_field!(GridY, I32Col, i32, |s| s.grid[1], |v| v as i32);
shape_field!(GridZ, I32Col, i32, |s| s.grid[2], |v| v as i32);
shape_field!(BlockX, I32Col, i32, |s| s.block[0], |v| v as i32);
shape_field!(BlockY, I32Col, i32, |s| s.block[1], |v| v as i32);
shape_field!(BlockZ, I32Col, i32, |s| s.block[2], |v| v as i32);
shape_field!(Registers, I32Col, i32, |s| s.registers_per_thread, |v| v
    as i32);
shape_field!(StaticShared, I32Col, i32, |s| s.static_shared_memory, |v| v
    as i32);
shape_field!(
    DynamicShared,
    I32Col,
    i32,
    |s| s.dynamic_shared_memory,
    |v| v as i32
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::dictionary::LocalDict;

    fn shape(i: u32) -> Shape {
        Shape {
            name: Sym::from_id(i % 7),
            device: 0,
            context: 1,
            stream: 7 + i % 3,
            grid: [(i % 5) as i32 * 100, 1, 1],
            block: [128 << (i % 2), 1, 1],
            registers_per_thread: 32 + (i % 4) as i32,
            static_shared_memory: 0,
            dynamic_shared_memory: (i % 11) as i32 * 1024,
        }
    }

    /// The dictionary entries and indices of one field: through the shapes, and
    /// value by value as the per-row columns mapped them.
    fn both<F: ShapeField>(table: &ShapeTable, order: Option<&[u32]>) -> [(Vec<i64>, Vec<u32>); 2] {
        let rows = table.in_write_order(order);
        let mut per_row = LocalDict::default();
        let values: Vec<i64> = (0..table.rows.len())
            .map(|i| F::get(table.get(i)))
            .collect();
        per_row.begin_ints(-1 << 40, 1 << 40, values.len());
        let in_order: Vec<i64> = match order {
            Some(o) => o.iter().map(|&i| values[i as usize]).collect(),
            None => values.clone(),
        };
        per_row.map_ints(in_order.into_iter());
        let mut shaped = LocalDict::default();
        shaped.begin_ints(-1 << 40, 1 << 40, values.len());
        let mut slots = Vec::new();
        shape_map::<F>(&rows, &mut slots, |v| shaped.index_int(v));
        let indices = (0..rows.len())
            .map(|i| slots[rows.in_order(i) as usize])
            .collect();
        let entries = |d: &LocalDict| {
            let mut plain = Vec::new();
            d.plain_ints(parquet::basic::Type::INT64, &mut plain);
            plain
                .chunks(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        [
            (entries(&per_row), per_row.indices.clone()),
            (entries(&shaped), indices),
        ]
    }

    #[test]
    fn every_row_keeps_its_own_shape_through_slot_collisions() {
        // More shapes than slots, recurring: slots are taken over again and again.
        let shapes: Vec<Shape> = (0..3000u32)
            .map(|i| Shape {
                grid: [i as i32, 1, 1],
                ..shape(i)
            })
            .collect();
        let mut table = ShapeTable::default();
        let rows: Vec<usize> = (0..20_000usize)
            .map(|r| (r * 7919) % shapes.len())
            .collect();
        for &r in &rows {
            table.push(shapes[r]);
        }
        assert_eq!(table.shapes.len(), shapes.len());
        for (i, &r) in rows.iter().enumerate() {
            assert_eq!(table.get(i), &shapes[r], "row {i}");
        }
        table.clear();
        table.push(shapes[5]);
        assert_eq!((table.get(0), table.shapes.len()), (&shapes[5], 1));
    }

    #[test]
    fn shaped_dictionaries_are_the_per_row_ones() {
        let mut table = ShapeTable::default();
        // Shapes recurring out of order, rows written in another order.
        let ids: Vec<u32> = (0..5000u32).map(|i| (i * 7919) % 61).collect();
        for &i in &ids {
            table.push(shape(i));
        }
        assert_eq!(table.shapes.len(), 61);
        assert_eq!(table.get(3), &shape(ids[3]));
        let order: Vec<u32> = (0..5000u32).map(|i| (i * 2713) % 5000).collect();
        for order in [None, Some(&order[..])] {
            let [a, b] = both::<Name>(&table, order);
            assert_eq!(a, b);
            let [a, b] = both::<Stream>(&table, order);
            assert_eq!(a, b);
            let [a, b] = both::<GridX>(&table, order);
            assert_eq!(a, b);
            let [a, b] = both::<BlockX>(&table, order);
            assert_eq!(a, b);
            let [a, b] = both::<Registers>(&table, order);
            assert_eq!(a, b);
            let [a, b] = both::<DynamicShared>(&table, order);
            assert_eq!(a, b);
            assert!(a.0.len() > 1, "a field with several values");
        }
    }
}
