//! The kernel columns a launch fixes, written from the rows' [`ShapeTable`]: a
//! dictionary column of a shape field maps each shape once, not each row
//! ([`Shaped`]). The pages are the bytes the per-row columns gave: a dictionary
//! lists its values in the order of their first row, which is the first row of the
//! first shape (in write order) that has the value.

use parquet::errors::ParquetError;

use super::column::{Column, ColumnBufs, Encode, OwnPages, WriteCtx};
use super::dict_chunks::int_dictionary;
use super::dictionary::{int_statistics, min_max};
use super::int_columns::{I32Col, U32Col};
use super::pages::{Chunk, Indices, Values};
use super::row_group::RowGroupOut;
use super::shape_table::{Shape, ShapeRows, ShapeTable};
use super::string_columns::StrCol;
use super::symbols::Sym;
use super::types::ColType;

/// One field of [`Shape`], written as the column it was.
pub trait ShapeField: std::fmt::Debug + Default {
    const TYPE: ColType;
    /// The field as the integer the column holds (a [`Sym`]'s id for the name).
    fn get(s: &Shape) -> i64;
    /// The rows' values through the crate's writer, as the per-row column gives
    /// them (when the file wants it: rare, so a copy).
    fn with_crate(
        table: &ShapeTable,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError>;
}

/// A column of a [`ShapeField`], from the [`ShapeTable`] its write context carries:
/// a dictionary column (declared `[Dict]`; any other encoding goes through the
/// crate's writer).
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
}

impl<F: ShapeField> Encode for Shaped<F> {
    fn dictionary<'a>(
        &'a self,
        own: &OwnPages<'a>,
        ctx: &WriteCtx<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        Ok(shaped::<F>(shape_rows(ctx)?, own, ctx, bufs))
    }

    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        F::with_crate(shape_rows(ctx)?.table, ctx, bufs, out)
    }
}

/// The row group's shapes, which a dataset with shape columns puts in `ctx`.
fn shape_rows<'a>(ctx: &WriteCtx<'a>) -> Result<&'a ShapeRows<'a>, ParquetError> {
    ctx.shapes
        .ok_or_else(|| ParquetError::General("a shape column without shapes".to_owned()))
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

/// A shape field as a dictionary chunk, the one `int_chunk` and `string_chunk`
/// give the per-row column (`None`: a strings' dictionary page past the file's
/// limit).
fn shaped<'a, F: ShapeField>(
    shapes: &'a ShapeRows<'a>,
    own: &OwnPages<'a>,
    ctx: &WriteCtx<'a>,
    bufs: &'a mut ColumnBufs,
) -> Option<Chunk<'a>> {
    let descr = own.descr;
    let rows = shapes.len();
    let ColumnBufs {
        dict,
        plain,
        shape_slots,
        ..
    } = bufs;
    let (each, statistics) = if F::TYPE == ColType::Str {
        dict.begin_syms(ctx.strings, rows);
        shape_map::<F>(shapes, shape_slots, |v| {
            dict.index_sym(Sym::from_id(v as u32))
        });
        dict.end();
        dict.plain_strings(ctx.strings, plain);
        if plain.len() > own.dictionary_limit {
            return None;
        }
        (true, None)
    } else {
        // Every shape of the table has a row of the row group.
        let range = min_max(shapes.table.shapes.iter().map(F::get));
        let each = int_dictionary(dict, range, rows, |dict| {
            shape_map::<F>(shapes, shape_slots, |v| dict.index_int(v));
        });
        dict.plain_ints(descr.physical_type(), plain);
        let statistics = own
            .statistics
            .then(|| int_statistics(descr, range, None, 0));
        (each, statistics)
    };
    Some(Chunk {
        descr,
        rows,
        levels: own.no_nulls(),
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
    })
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
            fn with_crate(
                table: &ShapeTable,
                ctx: &WriteCtx<'_>,
                bufs: &mut ColumnBufs,
                out: &mut RowGroupOut<'_, '_>,
            ) -> Result<(), ParquetError> {
                let values = table.rows.iter().map(|&s| {
                    let $v = Self::get(&table.shapes[s as usize]);
                    $back
                });
                let column = $col(values.collect::<Vec<$t>>());
                column.with_crate(ctx, bufs, out)
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
