//! The dictionary columns of a row group (strings as [`Sym`]s, the integers with
//! few values) written with cupmon's own pages: each row's value mapped to its
//! chunk's dictionary index ([`LocalDict`]), then [`crate::dict_pages`]. Each
//! function returns false, having written nothing, when the file wants the
//! parquet crate's writer for the column instead (see
//! [`RowGroupOut::own_dictionary`]) or the strings' dictionary page would pass the
//! file's limit (the crate then falls back to PLAIN pages).

use parquet::errors::ParquetError;

use crate::columns::{Scratch, Sym, WriteCtx};
use crate::dict_pages::{Chunk, Indices, Levels};
use crate::dictionary::{int_statistics, min_max};
use crate::row_group::RowGroupOut;

/// `f` on each of `values` in write order.
#[inline]
pub fn each<T: Copy>(values: &[T], order: Option<&[u32]>, mut f: impl FnMut(T)) {
    match order {
        Some(order) => order.iter().for_each(|&i| f(values[i as usize])),
        None => values.iter().for_each(|&v| f(v)),
    }
}

/// The levels of a column without NULLs.
fn no_nulls(optional: bool) -> Levels<'static> {
    if optional {
        Levels::AllPresent
    } else {
        Levels::Required
    }
}

/// An integer column (`present`: which rows are not NULL, `nulls` of them are).
pub fn ints<T: Copy + Into<i64>>(
    values: &[T],
    present: Option<(&[bool], usize)>,
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    let Some(settings) = out.own_dictionary()? else {
        return Ok(false);
    };
    let descr = out.descr()?;
    let rows = values.len();
    let Scratch {
        dict, defs8, plain, ..
    } = scratch;
    let nulls = present.map_or(0, |p| p.1);
    let range = match present {
        Some((present, nulls)) if nulls > 0 => min_max(
            values
                .iter()
                .zip(present)
                .filter(|p| *p.1)
                .map(|(&v, _)| v.into()),
        ),
        _ => min_max(values.iter().map(|&v| v.into())),
    };
    let (lo, hi) = range.unwrap_or((0, 0));
    dict.begin_ints(lo, hi, rows - nulls);
    let optional = descr.max_def_level() > 0;
    let levels = match present {
        Some(_) if nulls == rows => Levels::AllNull,
        Some((present, _)) if nulls > 0 => {
            defs8.clear();
            let mut one = |i: u32| {
                let i = i as usize;
                defs8.push(u8::from(present[i]));
                if present[i] {
                    dict.push_int(values[i].into());
                }
            };
            match ctx.order {
                Some(order) => order.iter().for_each(|&i| one(i)),
                None => (0..rows as u32).for_each(one),
            }
            Levels::Each(defs8)
        }
        _ => {
            each(values, ctx.order, |v| dict.push_int(v.into()));
            no_nulls(optional)
        }
    };
    dict.end();
    dict.plain_ints(descr.physical_type(), plain);
    let statistics = out
        .statistics()?
        .then(|| int_statistics(&descr, range, nulls as u64));
    let chunk = Chunk {
        descr: &descr,
        rows,
        levels,
        indices: Indices::Each(&dict.indices),
        dictionary: plain,
        entries: dict.entries(),
        statistics,
        nulls: nulls as u64,
    };
    let (bytes, close) = scratch.pages.write(&chunk, settings)?;
    out.append(bytes, close)?;
    Ok(true)
}

/// A string column, nullable or not.
pub fn strings<S: Copy + Into<Option<Sym>>>(
    values: &[S],
    ctx: &WriteCtx<'_>,
    scratch: &mut Scratch,
    out: &mut RowGroupOut<'_, '_>,
) -> Result<bool, ParquetError> {
    let Some(settings) = out.own_dictionary()? else {
        return Ok(false);
    };
    let descr = out.descr()?;
    let optional = descr.max_def_level() > 0;
    let rows = values.len();
    let Scratch {
        dict, defs8, plain, ..
    } = scratch;
    dict.begin_syms(ctx.strings, rows);
    defs8.clear();
    let mut nulls = 0;
    if optional {
        each(values, ctx.order, |s| match s.into() {
            Some(s) => {
                defs8.push(1);
                dict.push_sym(s);
            }
            None => {
                defs8.push(0);
                nulls += 1;
            }
        });
    } else {
        let mut missing = false;
        each(values, ctx.order, |s| match s.into() {
            Some(s) => dict.push_sym(s),
            None => missing = true,
        });
        if missing {
            dict.end();
            return Err(ParquetError::General(format!(
                "a NULL in the REQUIRED column {}",
                descr.name()
            )));
        }
    }
    dict.end();
    dict.plain_strings(ctx.strings, plain);
    if plain.len() > out.dictionary_limit()? {
        return Ok(false);
    }
    let levels = match (optional, nulls) {
        (false, _) => Levels::Required,
        (true, 0) => Levels::AllPresent,
        (true, n) if n == rows => Levels::AllNull,
        (true, _) => Levels::Each(defs8),
    };
    let chunk = Chunk {
        descr: &descr,
        rows,
        levels,
        indices: Indices::Each(&dict.indices),
        dictionary: plain,
        entries: dict.entries(),
        statistics: None,
        nulls: nulls as u64,
    };
    let (bytes, close) = scratch.pages.write(&chunk, settings)?;
    out.append(bytes, close)?;
    Ok(true)
}
