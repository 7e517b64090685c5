//! The dictionary columns of a row group (strings as [`Sym`]s, the integers with
//! few values) written with cupmon's own pages: each row's value mapped to its
//! chunk's dictionary index ([`LocalDict`]), then [`crate::encode::pages`]. Each
//! function returns false, having written nothing, when the file wants the
//! parquet crate's writer for the column instead (see
//! [`RowGroupOut::own_pages`]) or the strings' dictionary page would pass the
//! file's limit (the crate then falls back to PLAIN pages).

use parquet::errors::ParquetError;

use crate::encode::columns::{Scratch, Sym, WriteCtx};
use crate::encode::dictionary::{int_statistics, min_max, LocalDict};
use crate::encode::pages::{Chunk, Indices, Levels, Values};
use crate::encode::row_group::RowGroupOut;

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

/// The levels of a column without NULLs.
pub fn no_nulls(optional: bool) -> Levels<'static> {
    if optional {
        Levels::AllPresent
    } else {
        Levels::Required
    }
}

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
pub fn ints<T: Copy + Ord + Into<i64>>(
    values: &[T],
    rows: usize,
    present: Option<(&[bool], usize)>,
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    let Some(settings) = out.own_pages(true)? else {
        return Ok(false);
    };
    let descr = out.descr()?;
    let Scratch {
        dict, defs8, plain, ..
    } = scratch;
    let (nulls, mixed) = nulls_and_mixed(present, rows);
    let range = match mixed {
        _ if nulls == rows => None,
        Some(present) => min_max(values.iter().zip(present).filter(|p| *p.1).map(|(&v, _)| v)),
        None => min_max(values.iter().copied()),
    }
    .map(|(lo, hi)| (lo.into(), hi.into()));
    let levels = match mixed {
        _ if nulls == rows => Levels::AllNull,
        None => no_nulls(descr.max_def_level() > 0),
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
    let indices = if each {
        Indices::Each(&dict.indices)
    } else {
        Indices::Zero
    };
    dict.plain_ints(descr.physical_type(), plain);
    let statistics = out
        .statistics()?
        .then(|| int_statistics(&descr, range, None, nulls as u64));
    let chunk = Chunk {
        descr: &descr,
        rows,
        levels,
        values: Values::Dictionary {
            dictionary: plain,
            entries: dict.entries(),
            indices,
        },
        statistics,
        nulls: nulls as u64,
    };
    let (bytes, close) = scratch.pages.write(&chunk, settings)?;
    out.append(bytes, close)?;
    Ok(true)
}

/// A string column of `rows` rows, nullable or not (`values` empty: every row
/// NULL).
pub fn strings<S: Copy + Into<Option<Sym>>>(
    values: &[S],
    rows: usize,
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    let Some(settings) = out.own_pages(true)? else {
        return Ok(false);
    };
    let descr = out.descr()?;
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
    let Scratch {
        dict, defs8, plain, ..
    } = scratch;
    dict.begin_syms(ctx.strings, rows - nulls);
    let some = |s: S| s.into().expect("no NULL");
    let levels = if nulls == rows {
        Levels::AllNull
    } else if nulls == 0 {
        match ctx.order {
            Some(order) => dict.map_syms(order.iter().map(|&i| some(values[i as usize]))),
            None => dict.map_syms(values.iter().map(|&s| some(s))),
        }
        no_nulls(descr.max_def_level() > 0)
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
    if plain.len() > out.dictionary_limit()? {
        return Ok(false);
    }
    let chunk = Chunk {
        descr: &descr,
        rows,
        levels,
        values: Values::Dictionary {
            dictionary: plain,
            entries: dict.entries(),
            indices: Indices::Each(&dict.indices),
        },
        statistics: None,
        nulls: nulls as u64,
    };
    let (bytes, close) = scratch.pages.write(&chunk, settings)?;
    out.append(bytes, close)?;
    Ok(true)
}
