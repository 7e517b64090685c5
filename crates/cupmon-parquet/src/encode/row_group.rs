//! A row group being written column by column, each column either through the
//! parquet crate's column writer or as a chunk cupmon encoded itself
//! ([`crate::encode::pages`]), spliced in with `append_column`.

use std::fs::File;

use bytes::Bytes;
use parquet::basic::{Encoding, Type as PhysicalType};
use parquet::column::writer::ColumnCloseResult;
use parquet::data_type::DataType;
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::{SerializedColumnWriter, SerializedRowGroupWriter};
use parquet::schema::types::{ColumnDescPtr, SchemaDescriptor};

use super::pages::ChunkSettings;

/// The next column of a row group, and the file's settings.
pub struct RowGroupOut<'a, 'b> {
    rg: &'b mut SerializedRowGroupWriter<'a, File>,
    schema: &'b SchemaDescriptor,
    props: &'b WriterProperties,
    next: usize,
}

impl std::fmt::Debug for RowGroupOut<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowGroupOut")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl<'a, 'b> RowGroupOut<'a, 'b> {
    pub fn new(
        rg: &'b mut SerializedRowGroupWriter<'a, File>,
        schema: &'b SchemaDescriptor,
        props: &'b WriterProperties,
    ) -> Self {
        Self {
            rg,
            schema,
            props,
            next: 0,
        }
    }

    /// The next column's descriptor.
    pub fn descr(&self) -> Result<ColumnDescPtr, ParquetError> {
        if self.next >= self.schema.num_columns() {
            return Err(ParquetError::General(format!(
                "a row group of {} columns has no column {}",
                self.schema.num_columns(),
                self.next
            )));
        }
        Ok(self.schema.column(self.next))
    }

    /// The settings of cupmon's own pages for the next column, a dictionary
    /// column or (`dictionary` false) a DELTA_BINARY_PACKED one, or `None` when
    /// the file wants what only the crate's writer gives: another encoding, data
    /// pages v2, page statistics (a column index), min/max of strings, a bloom
    /// filter.
    pub fn own_pages(&self, dictionary: bool) -> Result<Option<ChunkSettings>, ParquetError> {
        let descr = self.descr()?;
        let path = descr.path();
        let p = self.props;
        let statistics = p.statistics_enabled(path);
        let encoding = if dictionary {
            p.dictionary_enabled(path)
        } else {
            !p.dictionary_enabled(path) && p.encoding(path) == Some(Encoding::DELTA_BINARY_PACKED)
        };
        // Page statistics of INT64 deltas only (the column index).
        let page_statistics = !dictionary && descr.physical_type() == PhysicalType::INT64;
        let supported = encoding
            && p.writer_version() == WriterVersion::PARQUET_1_0
            && (statistics != EnabledStatistics::Page || page_statistics)
            && (descr.physical_type() != PhysicalType::BYTE_ARRAY
                || statistics == EnabledStatistics::None)
            && p.bloom_filter_properties(path).is_none()
            // The crate's writer would end a page early at its size limit (at most
            // 8 bytes of value and a level bit per row here).
            && page_rows(p, path).saturating_mul(9) < p.column_data_page_size_limit(path);
        Ok(supported.then(|| ChunkSettings {
            compression: p.compression(path),
            page_rows: page_rows(p, path),
            offset_index: !p.offset_index_disabled(),
            column_index: statistics == EnabledStatistics::Page,
        }))
    }

    /// Whether the next column keeps chunk statistics.
    pub fn statistics(&self) -> Result<bool, ParquetError> {
        let descr = self.descr()?;
        Ok(self.props.statistics_enabled(descr.path()) != EnabledStatistics::None)
    }

    /// Largest dictionary page (bytes) of the next column before the crate's
    /// writer falls back to PLAIN pages.
    pub fn dictionary_limit(&self) -> Result<usize, ParquetError> {
        let descr = self.descr()?;
        Ok(self.props.column_dictionary_page_size_limit(descr.path()))
    }

    /// Write the next column with the parquet crate's column writer.
    pub fn with_writer(
        &mut self,
        f: impl FnOnce(&mut SerializedColumnWriter<'_>) -> Result<(), ParquetError>,
    ) -> Result<(), ParquetError> {
        let name = self.descr()?.name().to_owned();
        let mut w = self
            .rg
            .next_column()?
            .ok_or_else(|| ParquetError::General(format!("no column for {name}")))?;
        f(&mut w)?;
        w.close()?;
        self.next += 1;
        Ok(())
    }

    /// `values` (with definition levels `defs` for a nullable column) as the next
    /// column, through the crate's writer of `T`.
    pub fn write_batch<T: DataType>(
        &mut self,
        values: &[T::T],
        defs: Option<&[i16]>,
    ) -> Result<(), ParquetError> {
        self.with_writer(|w| {
            w.typed::<T>().write_batch(values, defs, None)?;
            Ok(())
        })
    }

    /// The next column as a chunk encoded elsewhere.
    pub fn append(&mut self, chunk: Bytes, close: ColumnCloseResult) -> Result<(), ParquetError> {
        self.rg.append_column(&chunk, close)?;
        self.next += 1;
        Ok(())
    }
}

/// Rows per data page: the crate's writer ends a page at the first batch boundary
/// past the row limit; ending ours there too starts every column's pages on the
/// same rows.
fn page_rows(p: &WriterProperties, path: &parquet::schema::types::ColumnPath) -> usize {
    let batch = p.write_batch_size().max(1);
    let rows = p.column_data_page_row_count_limit(path).div_ceil(batch) * batch;
    rows.clamp(1, i32::MAX as usize)
}
