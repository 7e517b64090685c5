//! The nullable INT64 column (durations, external ids, graph ids, queued times,
//! and the `dumps` dataset's optional numbers).

use parquet::data_type::Int64Type;
use parquet::errors::ParquetError;

use super::column::{each_row, in_order, Column, ColumnBufs, Encode, OwnPages, WriteCtx};
use super::delta_chunks::delta_chunk;
use super::dict_chunks::int_chunk;
use super::pages::Chunk;
use super::row_group::RowGroupOut;
use super::types::ColType;

/// A nullable INT64 column: the values (0 where NULL) and whether each is present.
/// Only what the rows need is stored: while every row is NULL (no graph, no queued
/// time, no trace window: the usual case), the count; while none is (durations),
/// the values; a row costs a store or none.
#[derive(Debug, Default)]
pub struct OptI64Col {
    len: usize,
    /// Every row's value, or empty while every row is NULL.
    values: Vec<i64>,
    /// Whether each row is present, or empty while none is NULL.
    present: Vec<bool>,
    nulls: usize,
}

impl OptI64Col {
    #[inline]
    pub fn push(&mut self, v: Option<i64>) {
        match v {
            None if self.values.is_empty() => self.nulls += 1,
            Some(v) if self.nulls == 0 => self.values.push(v),
            v => {
                self.store();
                self.values.push(v.unwrap_or(0));
                self.present.push(v.is_some());
                self.nulls += usize::from(v.is_none());
            }
        }
        self.len += 1;
    }

    /// Store every row's value and presence (rows so far are not all NULL, or not
    /// all present, any more).
    fn store(&mut self) {
        if self.values.is_empty() {
            self.values.resize(self.len, 0);
        }
        if self.present.len() < self.len {
            let so_far = self.nulls < self.len;
            self.present.resize(self.len, so_far);
        }
    }

    /// Row `i`.
    #[cfg(test)]
    pub fn get(&self, i: usize) -> Option<i64> {
        self.is_present(i).then(|| self.values[i])
    }

    fn is_present(&self, i: usize) -> bool {
        match self.present.get(i) {
            Some(&p) => p,
            None => self.nulls == 0,
        }
    }

    /// Set row `i`, which was NULL.
    pub fn fill(&mut self, i: usize, v: i64) {
        if self.is_present(i) {
            return;
        }
        self.store();
        self.values[i] = v;
        self.present[i] = true;
        self.nulls -= 1;
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
            cupmon_hugepages::advise_spare(&mut self.values);
        }
        if !self.present.is_empty() {
            self.present.reserve_exact(additional);
            cupmon_hugepages::advise_spare(&mut self.present);
        }
    }
}

impl Encode for OptI64Col {
    fn dictionary<'a>(
        &'a self,
        own: &OwnPages<'a>,
        ctx: &WriteCtx<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        let present = Some((&self.present[..], self.nulls));
        Ok(Some(int_chunk(
            &self.values,
            self.len,
            present,
            own,
            ctx,
            bufs,
        )))
    }

    fn delta<'a>(
        &'a self,
        own: &OwnPages<'a>,
        ctx: &WriteCtx<'a>,
        bufs: &'a mut ColumnBufs,
    ) -> Result<Option<Chunk<'a>>, ParquetError> {
        let present = Some((&self.present[..], self.nulls));
        Ok(delta_chunk(&self.values, self.len, present, own, ctx, bufs))
    }

    fn with_crate(
        &self,
        ctx: &WriteCtx<'_>,
        bufs: &mut ColumnBufs,
        out: &mut RowGroupOut<'_, '_>,
    ) -> Result<(), ParquetError> {
        let n = self.len;
        let ColumnBufs { i64s, defs, .. } = bufs;
        defs.clear();
        let values: &[i64] = if self.nulls == n {
            // All NULL: levels only.
            defs.resize(n, 0);
            &[]
        } else if self.nulls == 0 {
            defs.resize(n, 1);
            in_order(&self.values, ctx.order, i64s)
        } else {
            i64s.clear();
            let one = |i: usize| {
                if self.present[i] {
                    i64s.push(self.values[i]);
                    defs.push(1);
                } else {
                    defs.push(0);
                }
            };
            each_row(ctx.order, n, one);
            i64s
        };
        out.write_batch::<Int64Type>(values, Some(defs))
    }
}
