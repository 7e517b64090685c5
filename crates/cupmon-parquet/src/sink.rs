//! One dataset's output for one export: rows buffered per hour partition, written
//! as sorted row groups of [`ROW_GROUP_ROWS`] into one file per hour, the files
//! renamed into place at the end.

use std::path::PathBuf;
use std::sync::Arc;

use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::correlations::{Correlate, Correlations};
use crate::encode::Constant;
use crate::encode::{Scratch, Strings};
use crate::error::ExportError;
use crate::file_writer::{writer_properties, ParquetFile};
use crate::partition::partition_dir;
use crate::pool;
use crate::table::Rows;

/// Rows per row group: large enough for zstd and the encodings to find their
/// patterns and for engines to skip by statistics, small enough to sort in cache.
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows buffered over all hours of a dataset before the fullest hour is written
/// early (a dump spanning days must not hold a million rows per hour in memory).
const MAX_BUFFERED: usize = 3 * ROW_GROUP_ROWS;
/// Rows a part's columns grow to by doubling before a whole row group is reserved.
const GROWN: usize = 1 << 16;

/// What a dataset's export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatasetTotals {
    pub rows: u64,
    pub bytes: u64,
    pub files: Vec<PathBuf>,
}

#[derive(Debug)]
struct Part<R> {
    hour: i64,
    rows: R,
    file: Option<ParquetFile>,
}

/// The rows of one dataset of one export, on their way to `OUT/<dataset>/`.
#[derive(Debug)]
pub struct Sink<R> {
    dir: PathBuf,
    file_name: String,
    properties: Arc<WriterProperties>,
    run: [Constant; 5],
    parts: Vec<Part<R>>,
    /// Index of the part the last row went to.
    last: usize,
    buffered: usize,
    totals: DatasetTotals,
}

impl<R: Rows + Correlate> Sink<R> {
    /// Files will be `out/<dataset>/day=.../hour=.../<file_name>`.
    pub fn new(
        out: &std::path::Path,
        file_name: String,
        run: [Constant; 5],
        extra: Vec<KeyValue>,
    ) -> Self {
        Self {
            dir: out.join(R::SPEC.name),
            file_name,
            properties: Arc::new(writer_properties(&R::SPEC, extra)),
            run,
            parts: Vec::new(),
            last: 0,
            buffered: 0,
            totals: DatasetTotals::default(),
        }
    }

    /// [`Sink::new`] with its arguments as a tuple.
    pub fn from_args(
        (out, file_name, run, extra): (&std::path::Path, String, [Constant; 5], Vec<KeyValue>),
    ) -> Self {
        Self::new(out, file_name, run, extra)
    }

    /// The buffer of `hour`'s rows; the caller pushes one row and then calls
    /// [`Sink::pushed`].
    #[inline]
    pub fn rows(&mut self, hour: i64) -> &mut R {
        if self.parts.get(self.last).is_none_or(|p| p.hour != hour) {
            self.last = match self.parts.iter().position(|p| p.hour == hour) {
                Some(i) => i,
                None => {
                    self.parts.push(Part {
                        hour,
                        rows: pool::take(),
                        file: None,
                    });
                    self.parts.len() - 1
                }
            };
        }
        &mut self.parts[self.last].rows
    }

    /// After a row was pushed into the last [`Sink::rows`]: write a row group when
    /// it is full, or the fullest hour's when too much is buffered.
    #[inline]
    pub fn pushed(
        &mut self,
        strings: &Strings,
        correlations: &Correlations,
        scratch: &mut Scratch,
    ) -> Result<(), ExportError> {
        self.buffered += 1;
        let len = self.parts[self.last].rows.len();
        if len == GROWN {
            // Past this many rows a full row group is likely: allocate it once
            // rather than growing (and copying) every column step by step.
            self.parts[self.last].rows.reserve(ROW_GROUP_ROWS - GROWN);
        }
        if len >= ROW_GROUP_ROWS {
            self.flush(self.last, strings, correlations, scratch)?;
        } else if self.buffered >= MAX_BUFFERED {
            let fullest = (0..self.parts.len())
                .max_by_key(|&i| self.parts[i].rows.len())
                .expect("a row was pushed");
            self.flush(fullest, strings, correlations, scratch)?;
        }
        Ok(())
    }

    fn flush(
        &mut self,
        index: usize,
        strings: &Strings,
        correlations: &Correlations,
        scratch: &mut Scratch,
    ) -> Result<(), ExportError> {
        let part = &mut self.parts[index];
        let n = part.rows.len();
        if n == 0 {
            return Ok(());
        }
        part.rows.correlate(correlations);
        let time = part.rows.time();
        let mut rows_in_order = std::mem::take(&mut scratch.rows_in_order);
        let sorted = !scratch.row_order.sort(time, &mut rows_in_order);
        let order = (!sorted).then_some(&rows_in_order[..]);
        if part.file.is_none() {
            let path = self
                .dir
                .join(partition_dir(part.hour))
                .join(&self.file_name);
            part.file = Some(ParquetFile::create(
                path,
                &R::SPEC,
                self.properties.clone(),
            )?);
        }
        let file = part.file.as_mut().expect("created above");
        let written = file.write_row_group(&part.rows, &self.run, order, strings, scratch);
        scratch.rows_in_order = rows_in_order;
        written?;
        if index == self.last {
            part.rows.clear();
        } else {
            // An hour that rows have left: its buffers go to the next new hour.
            pool::give(std::mem::take(&mut part.rows));
        }
        self.buffered -= n;
        Ok(())
    }

    /// Write what is buffered and rename every file into place.
    pub fn finish(
        mut self,
        strings: &Strings,
        correlations: &Correlations,
        scratch: &mut Scratch,
    ) -> Result<DatasetTotals, ExportError> {
        for i in 0..self.parts.len() {
            self.flush(i, strings, correlations, scratch)?;
        }
        let mut parts = std::mem::take(&mut self.parts);
        parts.sort_by_key(|p| p.hour);
        for part in parts {
            pool::give(part.rows);
            if let Some(file) = part.file {
                let path = file.path().to_path_buf();
                self.totals.rows += file.rows();
                self.totals.bytes += file.finish()?;
                self.totals.files.push(path);
            }
        }
        Ok(self.totals)
    }
}
