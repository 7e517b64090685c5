//! One Parquet file being written: to a hidden temporary name beside its final
//! name, renamed into place by [`ParquetFile::finish`] (so a reader, or another
//! host writing into the same directory, never sees half a file), removed if it is
//! dropped unfinished. Ctrl-C removes it too. (`cupmon-files`' [`AtomicOutput`].)

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cupmon_files::{AtomicOutput, OutputError};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::{KeyValue, SortingColumn};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{SchemaDescPtr, SchemaDescriptor};

use crate::encode::RowGroupOut;
use crate::encode::{write_constant, Constant};
use crate::encode::{Scratch, Strings, WriteCtx};
use crate::error::ExportError;
use crate::schema::{ColType, DatasetSpec, Enc, SCHEMA_VERSION};
use crate::table::Rows;

/// zstd level of every column chunk (1: the export is CPU-bound; level 3 saved
/// little on cupmon's columns, bench/parquet/RESULTS.md).
pub const ZSTD_LEVEL: i32 = 1;

/// The writer settings of a dataset's files: each column's encoding, zstd, data
/// pages v1 (read by every engine), the sort order, and cupmon's metadata. Cupmon's
/// own pages follow them too (`RowGroupOut::own_pages`), and leave a column to the
/// crate's writer where they cannot.
pub fn writer_properties(spec: &DatasetSpec, extra: Vec<KeyValue>) -> WriterProperties {
    let level = ZstdLevel::try_new(ZSTD_LEVEL).expect("zstd level 1 exists");
    let mut b = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(level))
        .set_created_by(format!("cupmon {}", env!("CARGO_PKG_VERSION")))
        .set_dictionary_page_size_limit(8 << 20)
        .set_write_batch_size(8192)
        .set_data_page_row_count_limit(100_000)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_statistics_truncate_length(Some(128))
        .set_column_index_truncate_length(Some(64));
    for c in spec.all_columns() {
        let path = parquet::schema::types::ColumnPath::from(c.name);
        b = b.set_column_dictionary_enabled(path.clone(), c.enc == Enc::Dict);
        if let Some(encoding) = c.enc.fallback() {
            b = b.set_column_encoding(path.clone(), encoding);
        }
        // Page statistics (the page index) where engines skip by time; none for
        // the dictionary strings (kernel names: min and max prune nothing, and
        // comparing every name cost a tenth of the export).
        if c.name == "start_ns" {
            b = b.set_column_statistics_enabled(path, EnabledStatistics::Page);
        } else if c.enc == Enc::Dict && matches!(c.ty, ColType::Str | ColType::OptStr) {
            b = b.set_column_statistics_enabled(path, EnabledStatistics::None);
        }
    }
    let mut kv = vec![
        KeyValue::new("cupmon.dataset".to_owned(), spec.name.to_owned()),
        KeyValue::new(
            "cupmon.schema_version".to_owned(),
            SCHEMA_VERSION.to_string(),
        ),
    ];
    kv.extend(extra);
    b = b.set_key_value_metadata(Some(kv));
    if let Some(i) = spec.index_of("start_ns") {
        b = b.set_sorting_columns(Some(vec![SortingColumn {
            column_idx: i as i32,
            descending: false,
            nulls_first: false,
        }]));
    }
    b.build()
}

/// A file being written.
#[derive(Debug)]
pub struct ParquetFile {
    path: PathBuf,
    out: AtomicOutput,
    writer: SerializedFileWriter<File>,
    schema: SchemaDescPtr,
    properties: Arc<WriterProperties>,
    rows: u64,
}

impl ParquetFile {
    /// Start `path` (its directory is created) for `spec`'s rows.
    pub fn create(
        path: PathBuf,
        spec: &DatasetSpec,
        properties: Arc<WriterProperties>,
    ) -> Result<Self, ExportError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| ExportError::io(dir, "cannot create the directory", e))?;
        let out = AtomicOutput::create(&path).map_err(output_error)?;
        let file = out.file().map_err(output_error)?;
        let schema = spec.parquet_schema();
        let writer = SerializedFileWriter::new(file, schema.clone(), properties.clone())
            .map_err(|e| ExportError::parquet(&path, e))?;
        Ok(Self {
            path,
            out,
            writer,
            schema: Arc::new(SchemaDescriptor::new(schema)),
            properties,
            rows: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Write `rows` (in `order`, when given) as one row group, the run columns
    /// first.
    pub fn write_row_group<R: Rows>(
        &mut self,
        rows: &R,
        run: &[Constant],
        order: Option<&[u32]>,
        strings: &Strings,
        scratch: &mut Scratch,
    ) -> Result<(), ExportError> {
        let n = rows.len();
        if n == 0 {
            return Ok(());
        }
        let path = &self.path;
        let writer = &mut self.writer;
        let run_specs = crate::schema::RUN_COLUMNS;
        let (schema, properties) = (&self.schema, &self.properties);
        let result = (|| {
            let mut rg = writer.next_row_group()?;
            let mut out = RowGroupOut::new(&mut rg, schema, properties);
            let ctx = WriteCtx {
                order,
                strings,
                shapes: None,
            };
            for (spec, value) in run_specs.iter().zip(run) {
                write_constant(spec.ty, spec.enc, value, n, &ctx, scratch, &mut out)?;
            }
            rows.write_own(&ctx, scratch, &mut out)?;
            rg.close()?;
            Ok(())
        })();
        result.map_err(|e| ExportError::parquet(path, e))?;
        self.rows += n as u64;
        Ok(())
    }

    /// Close the file and rename it into place; returns its size in bytes.
    pub fn finish(self) -> Result<u64, ExportError> {
        // The footer, written and flushed: a write that fails here (a full disk) is an
        // I/O error of the output. (`into_inner` would turn it into a string.)
        let mut writer = self.writer;
        writer
            .finish()
            .map_err(|e| ExportError::parquet(&self.path, e))?;
        let file = writer.inner_mut();
        file.sync_all()
            .map_err(|e| ExportError::io(&self.path, "cannot write", e))?;
        let bytes = file
            .metadata()
            .map_err(|e| ExportError::io(&self.path, "cannot read back", e))?
            .len();
        // (The writer, finished, gives its file back only as a borrow.)
        let file = file
            .try_clone()
            .map_err(|e| ExportError::io(&self.path, "cannot write", e))?;
        drop(writer);
        self.out.commit_file(file).map_err(output_error)?;
        Ok(bytes)
    }
}

fn output_error(e: OutputError) -> ExportError {
    ExportError::io(e.path, e.what, e.err)
}
