//! cupmon's dictionary chunks of a row group's columns (strings as [`Sym`]s, the
//! integers with few values): each row's value mapped to its chunk's dictionary
//! index ([`LocalDict`]), the dictionary PLAIN-encoded, for [`super::pages`] to
//! write. `None` when the strings' dictionary page would pass the file's limit
//! (the crate's writer then falls back to PLAIN pages, as it does).

use parquet::errors::ParquetError;

use super::column::{each, each_row, nulls_and_mixed, ColumnBufs, OwnPages, WriteCtx};
use super::dictionary::{int_statistics, min_max, LocalDict};
use super::pages::{Chunk, Indices, Levels, Values};
use super::symbols::Sym;

/// Start `dict` for an integer chunk whose `present` values span `range`; true when
/// the rows need indices, which `map` then gives, false for no value or one
/// (devices, contexts, grid_z, ...: nothing to map).
pub fn int_dictionary(
    dict: &mut LocalDict,
    range: Option<(i64, i64)>,
    present: usize,
    map: impl FnOnce(&mut LocalDict),
) -> bool {
    match range {
        None => {
            dict.begin_ints(0, 0, 0);
            false
        }
        Some((lo, hi)) if lo == hi => {
            dict.one_int(lo);
            false
        }
        Some((lo, hi)) => {
            dict.begin_ints(lo, hi, present);
            map(dict);
            dict.end();
            true
        }
    }
}

/// An integer column of `rows` rows (`present`: which rows are not NULL, `nulls`
/// of them are; `values` and `present` may be empty when every row is NULL).
pub fn int_chunk<'a, T: Copy + Ord + Into<i64>>(
    values: &'a [T],
    rows: usize,
    present: Option<(&'a [bool], usize)>,
    own: &OwnPages<'a>,
    ctx: &WriteCtx<'a>,
    bufs: &'a mut ColumnBufs,
) -> Chunk<'a> {
    let ColumnBufs {
        dict, defs8, plain, ..
    } = bufs;
    let (nulls, mixed) = nulls_and_mixed(present, rows);
    let range = match mixed {
        _ if nulls == rows => None,
        Some(present) => min_max(values.iter().zip(present).filter(|p| *p.1).map(|(&v, _)| v)),
        None => min_max(values.iter().copied()),
    }
    .map(|(lo, hi)| (lo.into(), hi.into()));
    let levels = match mixed {
        _ if nulls == rows => Levels::AllNull,
        None => own.no_nulls(),
        Some(present) => {
            defs8.clear();
            each(present, ctx.order, |p| defs8.push(u8::from(p)));
            Levels::Each(defs8)
        }
    };
    let each = int_dictionary(dict, range, rows - nulls, |dict| match (mixed, ctx.order) {
        (None, Some(order)) => dict.map_ints(order.iter().map(|&i| values[i as usize].into())),
        (None, None) => dict.map_ints(values.iter().map(|&v| v.into())),
        (Some(present), order) => {
            let one = |i: usize| {
                if present[i] {
                    dict.push_int(values[i].into());
                }
            };
            each_row(order, rows, one);
        }
    });
    dict.plain_ints(own.descr.physical_type(), plain);
    let dict: &'a LocalDict = dict;
    let indices = if each {
        Indices::Each(&dict.indices)
    } else {
        Indices::Zero
    };
    Chunk {
        descr: own.descr,
        rows,
        levels,
        values: Values::Dictionary {
            dictionary: plain,
            entries: dict.entries(),
            indices,
        },
        statistics: own
            .statistics
            .then(|| int_statistics(own.descr, range, None, nulls as u64)),
        nulls: nulls as u64,
    }
}

/// A string column of `rows` rows, nullable or not (`values` empty: every row
/// NULL); `None` when its dictionary page would pass the file's limit.
pub fn string_chunk<'a, S: Copy + Into<Option<Sym>>>(
    values: &'a [S],
    rows: usize,
    own: &OwnPages<'a>,
    ctx: &WriteCtx<'a>,
    bufs: &'a mut ColumnBufs,
) -> Result<Option<Chunk<'a>>, ParquetError> {
    let descr = own.descr;
    let nulls = if values.is_empty() {
        rows
    } else {
        values.iter().filter(|&&s| s.into().is_none()).count()
    };
    if nulls > 0 && descr.max_def_level() == 0 {
        return Err(ParquetError::General(format!(
            "{nulls} NULLs in the REQUIRED column {}",
            descr.name()
        )));
    }
    let ColumnBufs {
        dict, defs8, plain, ..
    } = bufs;
    dict.begin_syms(ctx.strings, rows - nulls);
    let some = |s: S| s.into().expect("no NULL");
    let levels = if nulls == rows {
        Levels::AllNull
    } else if nulls == 0 {
        match ctx.order {
            Some(order) => dict.map_syms(order.iter().map(|&i| some(values[i as usize]))),
            None => dict.map_syms(values.iter().map(|&s| some(s))),
        }
        own.no_nulls()
    } else {
        defs8.clear();
        each(values, ctx.order, |s| match s.into() {
            Some(s) => {
                defs8.push(1);
                dict.push_sym(s);
            }
            None => defs8.push(0),
        });
        Levels::Each(defs8)
    };
    dict.end();
    dict.plain_strings(ctx.strings, plain);
    if plain.len() > own.dictionary_limit {
        return Ok(None);
    }
    let dict: &'a LocalDict = dict;
    Ok(Some(Chunk {
        descr,
        rows,
        levels,
        values: Values::Dictionary {
            dictionary: plain,
            entries: dict.entries(),
            indices: Indices::Each(&dict.indices),
        },
        statistics: None,
        nulls: nulls as u64,
    }))
}
