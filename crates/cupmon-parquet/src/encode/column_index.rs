//! The column index (page statistics) of an INT64 chunk cupmon writes itself
//! (`start_ns`: engines skip pages by time): each page's min and max, NULL count
//! and definition level histogram, and the boundary order, as the parquet crate's
//! writer makes them (an all-NULL page has empty min and max; the order is
//! ascending while no page's min or max is below the last one's, and so on).

use parquet::basic::{BoundaryOrder, Type as PhysicalType};
use parquet::errors::ParquetError;
use parquet::file::metadata::{ColumnIndexBuilder, LevelHistogram};
use parquet::file::page_index::column_index::ColumnIndexMetaData;

/// A chunk's column index being built, page by page.
pub struct PageStats {
    builder: ColumnIndexBuilder,
    optional: bool,
    last: Option<(i64, i64)>,
    ascending: bool,
    descending: bool,
}

impl std::fmt::Debug for PageStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageStats")
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl PageStats {
    pub fn new(optional: bool) -> Self {
        Self {
            builder: ColumnIndexBuilder::new(PhysicalType::INT64),
            optional,
            last: None,
            ascending: true,
            descending: true,
        }
    }

    /// A page of `rows` rows, `present` of them not NULL, their values in
    /// `range` (`None`: none present).
    pub fn page(&mut self, range: Option<(i64, i64)>, present: usize, rows: usize) {
        let nulls = (rows - present) as i64;
        match range {
            None => self
                .builder
                .append(true, Vec::new(), Vec::new(), nulls, None),
            Some((lo, hi)) => {
                if let Some((last_lo, last_hi)) = self.last {
                    self.ascending &= !(last_lo > lo || last_hi > hi);
                    self.descending &= !(lo > last_lo || hi > last_hi);
                }
                self.last = Some((lo, hi));
                let bytes = |v: i64| v.to_le_bytes().to_vec();
                self.builder
                    .append(false, bytes(lo), bytes(hi), nulls, None);
            }
        }
        let histogram = self
            .optional
            .then(|| LevelHistogram::from(vec![nulls, present as i64]));
        self.builder.append_histograms(&None, &histogram);
    }

    pub fn finish(mut self) -> Result<ColumnIndexMetaData, ParquetError> {
        self.builder
            .set_boundary_order(match (self.ascending, self.descending) {
                (true, _) => BoundaryOrder::ASCENDING,
                (false, true) => BoundaryOrder::DESCENDING,
                (false, false) => BoundaryOrder::UNORDERED,
            });
        self.builder.build()
    }
}
