//! Column chunks encoded by cupmon rather than by the parquet crate's column
//! writer (whose value encoder hashes every value into its interner, row after
//! row, and whose delta encoder takes every value of a constant:
//! bench/parquet/RESULTS.md): a dictionary column (a PLAIN dictionary page, then
//! data pages v1 of RLE definition levels and RLE_DICTIONARY indices), or the same
//! integer in every row as DELTA_BINARY_PACKED pages (zero deltas: a few bytes per
//! block). Each page is zstd-compressed, its header written by the crate's
//! `SerializedPageWriter`. The chunk's bytes and metadata (encodings, page
//! encoding stats, statistics, definition level histogram, offset index) are what
//! the crate's writer gives the same column, which the tests check; the chunk goes
//! into the file with `append_column`, which moves its offsets to where it lands.

use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{Compression, Encoding, PageType};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ColumnChunkMetaData, LevelHistogram, PageEncodingStats};
use parquet::file::page_index::offset_index::{OffsetIndexMetaData, PageLocation};
use parquet::file::statistics::Statistics;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

use super::column_index::PageStats;
use super::dictionary::min_max;
use super::{delta, rle};

/// The definition levels of a chunk's rows.
#[derive(Debug, Clone, Copy)]
pub enum Levels<'a> {
    /// A REQUIRED column: none.
    Required,
    /// OPTIONAL, no NULL.
    AllPresent,
    /// OPTIONAL, every row NULL.
    AllNull,
    /// OPTIONAL: per row in write order, 1 present, 0 NULL.
    Each(&'a [u8]),
}

/// The dictionary index of each present row.
#[derive(Debug, Clone, Copy)]
pub enum Indices<'a> {
    /// Entry 0 in every present row (a constant).
    Zero,
    /// Per present row, in write order.
    Each(&'a [u32]),
    /// Per present row, `map[rows[i]]`, in write order (`order`, as in
    /// [`super::column::WriteCtx::order`]): each row's launch shape mapped to the
    /// shape's entry (gathered a page at a time, which stays in cache, rather than
    /// a row group's worth per column).
    Mapped {
        rows: &'a [u32],
        order: Option<&'a [u32]>,
        map: &'a [u32],
    },
}

/// The values of a chunk's present rows.
#[derive(Debug, Clone, Copy)]
pub enum Values<'a> {
    /// Indices into a dictionary: its entries, PLAIN-encoded, and their number.
    Dictionary {
        dictionary: &'a [u8],
        entries: usize,
        indices: Indices<'a>,
    },
    /// The same integer in every present row, DELTA_BINARY_PACKED in blocks of
    /// `block` values (the crate's: 128 for INT32, 256 for INT64).
    DeltaConstant { value: i64, block: usize },
    /// INT64 values of the present rows in write order, DELTA_BINARY_PACKED.
    Delta(&'a [i64]),
    /// [`Values::Delta`] of values kept in the rows' order: taken in write order
    /// a page at a time (which stays in cache) rather than a row group at a time.
    DeltaGather(Gather<'a>),
}

/// Every row's value, `values[order[i]]` being the `i`-th in write order.
#[derive(Debug, Clone, Copy)]
pub enum Gather<'a> {
    I64 { values: &'a [i64], order: &'a [u32] },
    U32 { values: &'a [u32], order: &'a [u32] },
}

impl Gather<'_> {
    /// Values `range` (in write order) into `out`.
    fn page(&self, range: std::ops::Range<usize>, out: &mut Vec<i64>) {
        out.clear();
        match *self {
            Gather::I64 { values, order } => {
                out.extend(order[range].iter().map(|&i| values[i as usize]));
            }
            Gather::U32 { values, order } => {
                out.extend(order[range].iter().map(|&i| i64::from(values[i as usize])));
            }
        }
    }
}

/// A column chunk to write.
#[derive(Debug)]
pub struct Chunk<'a> {
    pub descr: &'a ColumnDescPtr,
    pub rows: usize,
    pub levels: Levels<'a>,
    pub values: Values<'a>,
    /// Chunk statistics, when the column has them.
    pub statistics: Option<Statistics>,
    /// NULL rows (for the definition level histogram).
    pub nulls: u64,
}

/// How the file's columns are written (from its `WriterProperties`).
#[derive(Debug, Clone, Copy)]
pub struct ChunkSettings {
    pub compression: Compression,
    /// Rows per data page.
    pub page_rows: usize,
    pub offset_index: bool,
    /// Page statistics (a column index): INT64 delta chunks only.
    pub column_index: bool,
}

/// Page buffers and the zstd context, reused from chunk to chunk.
#[derive(Default)]
pub struct PageScratch {
    page: Vec<u8>,
    compressed: Vec<u8>,
    /// A page's [`Indices::Mapped`] indices.
    gathered: Vec<u32>,
    /// A page's [`Values::DeltaGather`] values.
    gathered_i64: Vec<i64>,
    zstd: Option<(i32, zstd::bulk::Compressor<'static>)>,
}

impl std::fmt::Debug for PageScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageScratch")
            .field("page", &self.page.capacity())
            .field("compressed", &self.compressed.capacity())
            .finish_non_exhaustive()
    }
}

fn io(e: std::io::Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl PageScratch {
    /// `self.page` compressed as `compression` says, as a page's bytes.
    fn compressed(&mut self, compression: Compression) -> Result<Bytes, ParquetError> {
        let level = match compression {
            Compression::UNCOMPRESSED => return Ok(Bytes::copy_from_slice(&self.page)),
            Compression::ZSTD(level) => level.compression_level(),
            other => {
                return Err(ParquetError::NYI(format!(
                    "cupmon's dictionary pages with {other} compression"
                )))
            }
        };
        if self.zstd.as_ref().is_none_or(|(l, _)| *l != level) {
            self.zstd = Some((level, zstd::bulk::Compressor::new(level).map_err(io)?));
        }
        let (_, zstd) = self.zstd.as_mut().expect("set above");
        self.compressed.clear();
        self.compressed
            .reserve(zstd::zstd_safe::compress_bound(self.page.len()));
        zstd.compress_to_buffer(&self.page[..], &mut self.compressed)
            .map_err(io)?;
        Ok(Bytes::copy_from_slice(&self.compressed))
    }

    /// Write `chunk`: its bytes (offsets from 0) and what `append_column` needs.
    pub fn write(
        &mut self,
        chunk: &Chunk<'_>,
        settings: ChunkSettings,
    ) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
        let mut sink = TrackedWrite::new(Vec::new());
        let mut writer = SerializedPageWriter::new(&mut sink);
        let (mut compressed, mut uncompressed, mut written) = (0i64, 0i64, 0u64);
        let (encoding, dictionary_offset) = match chunk.values {
            Values::Dictionary {
                dictionary,
                entries,
                ..
            } => {
                self.page.clear();
                self.page.extend_from_slice(dictionary);
                let buf = self.compressed(settings.compression)?;
                let dictionary = Page::DictionaryPage {
                    buf,
                    num_values: entries as u32,
                    encoding: Encoding::PLAIN,
                    is_sorted: false,
                };
                let spec = writer.write_page(CompressedPage::new(dictionary, self.page.len()))?;
                compressed += spec.compressed_size as i64;
                uncompressed += spec.uncompressed_size as i64;
                written += spec.bytes_written;
                (Encoding::RLE_DICTIONARY, Some(spec.offset as i64))
            }
            Values::DeltaConstant { .. } | Values::Delta(_) | Values::DeltaGather(_) => {
                (Encoding::DELTA_BINARY_PACKED, None)
            }
        };
        let optional = chunk.descr.max_def_level() > 0;
        let mut page_stats = settings.column_index.then(|| PageStats::new(optional));
        let mut locations = Vec::new();
        let (mut row, mut value, mut seen) = (0, 0, 0);
        while row < chunk.rows {
            let end = (row + settings.page_rows).min(chunk.rows);
            let values = self.data_page(chunk, row..end, value, &mut seen);
            if let Some(stats) = page_stats.as_mut() {
                let range = match chunk.values {
                    Values::Delta(all) => min_max(all[value..value + values].iter().copied()),
                    // The page's values, which `data_page` left there.
                    Values::DeltaGather(_) => min_max(self.gathered_i64.iter().copied()),
                    Values::DeltaConstant { value: v, .. } => (values > 0).then_some((v, v)),
                    Values::Dictionary { .. } => {
                        return Err(ParquetError::NYI(
                            "page statistics of cupmon's dictionary pages".to_owned(),
                        ))
                    }
                };
                stats.page(range, values, end - row);
            }
            let page = Page::DataPage {
                buf: self.compressed(settings.compression)?,
                num_values: (end - row) as u32,
                encoding,
                def_level_encoding: Encoding::RLE,
                rep_level_encoding: Encoding::RLE,
                statistics: None,
            };
            let spec = writer.write_page(CompressedPage::new(page, self.page.len()))?;
            locations.push(PageLocation {
                offset: spec.offset as i64,
                compressed_page_size: spec.compressed_size as i32,
                first_row_index: row as i64,
            });
            compressed += spec.compressed_size as i64;
            uncompressed += spec.uncompressed_size as i64;
            written += spec.bytes_written;
            (row, value) = (end, value + values);
        }
        writer.close()?;
        let data_offset = locations.first().map_or(0, |l| l.offset);
        let mut encoding_stats = Vec::new();
        let mut encodings = vec![Encoding::RLE, encoding];
        if dictionary_offset.is_some() {
            encodings.push(Encoding::PLAIN);
            encoding_stats.push(PageEncodingStats {
                page_type: PageType::DICTIONARY_PAGE,
                encoding: Encoding::PLAIN,
                count: 1,
            });
        }
        encoding_stats.push(PageEncodingStats {
            page_type: PageType::DATA_PAGE,
            encoding,
            count: locations.len() as i32,
        });
        let mut metadata = ColumnChunkMetaData::builder(Arc::clone(chunk.descr))
            .set_compression(settings.compression)
            .set_encodings_mask(parquet::basic::EncodingMask::new_from_encodings(
                encodings.iter(),
            ))
            .set_page_encoding_stats(encoding_stats)
            .set_total_compressed_size(compressed)
            .set_total_uncompressed_size(uncompressed)
            .set_num_values(chunk.rows as i64)
            .set_data_page_offset(data_offset)
            .set_dictionary_page_offset(dictionary_offset);
        if let Some(statistics) = chunk.statistics.clone() {
            // With statistics the crate keeps a definition level histogram too
            // (for OPTIONAL columns: NULL rows, present rows).
            let histogram = (chunk.descr.max_def_level() > 0).then(|| {
                LevelHistogram::from(vec![
                    chunk.nulls as i64,
                    (chunk.rows as u64 - chunk.nulls) as i64,
                ])
            });
            metadata = metadata
                .set_statistics(statistics)
                .set_definition_level_histogram(histogram);
        }
        let close = ColumnCloseResult {
            bytes_written: written,
            rows_written: chunk.rows as u64,
            metadata: metadata.build()?,
            bloom_filter: None,
            column_index: page_stats.map(PageStats::finish).transpose()?,
            offset_index: settings.offset_index.then_some(OffsetIndexMetaData {
                page_locations: locations,
                unencoded_byte_array_data_bytes: None,
            }),
        };
        Ok((Bytes::from(sink.into_inner()?), close))
    }

    /// The uncompressed data page of `rows` into `self.page`, its values starting at
    /// present row `value`; returns how many values it holds. `seen`: the largest
    /// index so far, which sets the page's bit width, as the crate's writer sets it
    /// from the entries so far (so that its files and these are the same bytes).
    fn data_page(
        &mut self,
        chunk: &Chunk<'_>,
        rows: std::ops::Range<usize>,
        value: usize,
        seen: &mut u32,
    ) -> usize {
        let page = &mut self.page;
        page.clear();
        let n = rows.len();
        let values = match chunk.levels {
            Levels::Required => n,
            Levels::AllPresent => with_length(page, |p| rle::rle_run(1, n, 1, p), n),
            Levels::AllNull => with_length(page, |p| rle::rle_run(0, n, 1, p), 0),
            Levels::Each(defs) => {
                let defs = &defs[rows];
                let present = defs.iter().map(|&d| usize::from(d)).sum();
                with_length(page, |p| rle::encode(defs, 1, p), present)
            }
        };
        match chunk.values {
            Values::Dictionary {
                indices: Indices::Zero,
                ..
            } => {
                page.push(0);
                rle::rle_run(0, values, 0, page);
            }
            Values::Dictionary {
                indices: Indices::Each(indices),
                ..
            } => dictionary_page(&indices[value..value + values], seen, page),
            Values::Dictionary {
                indices: Indices::Mapped { rows, order, map },
                ..
            } => {
                let gathered = &mut self.gathered;
                gathered.clear();
                let range = value..value + values;
                match order {
                    Some(order) => gathered
                        .extend(order[range].iter().map(|&i| map[rows[i as usize] as usize])),
                    None => gathered.extend(rows[range].iter().map(|&s| map[s as usize])),
                }
                dictionary_page(gathered, seen, page);
            }
            Values::DeltaConstant { value, block } => delta::constant(value, values, block, page),
            Values::Delta(all) => delta::encode_i64(&all[value..value + values], page),
            Values::DeltaGather(gather) => {
                gather.page(value..value + values, &mut self.gathered_i64);
                delta::encode_i64(&self.gathered_i64, page);
            }
        }
        values
    }
}

/// A dictionary data page's indices (after its levels): the bit width of the
/// largest index so far (`seen`, updated), then the indices.
fn dictionary_page(indices: &[u32], seen: &mut u32, page: &mut Vec<u8>) {
    *seen = indices.iter().copied().fold(*seen, u32::max);
    let width = rle::bit_width(*seen);
    page.push(width);
    rle::encode(indices, width, page);
}

/// Levels written by `f`, after their length (4 bytes, little-endian) as data
/// pages v1 have them; returns `values`.
fn with_length(page: &mut Vec<u8>, f: impl FnOnce(&mut Vec<u8>), values: usize) -> usize {
    let start = page.len();
    page.extend_from_slice(&[0; 4]);
    f(page);
    let len = (page.len() - start - 4) as u32;
    page[start..start + 4].copy_from_slice(&len.to_le_bytes());
    values
}
