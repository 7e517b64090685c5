//! What can go wrong in an export, each naming the file or dump and the value.

use std::path::PathBuf;

use cupmon_records::DumpError;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{dir}: {source}")]
    Dump {
        dir: PathBuf,
        #[source]
        source: DumpError,
    },
    #[error("{path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: writing Parquet: {source}")]
    Parquet {
        path: PathBuf,
        #[source]
        source: parquet::errors::ParquetError,
    },
    #[error("{path}: an earlier export's file that cupmon cannot read: {why}")]
    BadState { path: PathBuf, why: String },
    #[error(
        "{dir}: {out} already holds an export of this dump ({existing}) that overlaps this one \
         ({new}): its rows would be there twice; export other times (--from/--to) or into \
         another directory"
    )]
    Overlap {
        dir: PathBuf,
        out: PathBuf,
        existing: String,
        new: String,
    },
    #[error(
        "{dir}: {out} already holds files named {stem}.* from another dump (session started at \
         {other_start} Unix ns, this one at {this_start}): the same host, rank and pid; export \
         into another directory, or give --host a distinct name"
    )]
    SameName {
        dir: PathBuf,
        out: PathBuf,
        stem: String,
        other_start: String,
        this_start: String,
    },
    #[error(
        "{dir}: {segments} segments before its first live one were removed without a line in \
         segments/index.jsonl, so cupmon cannot tell which of its chunks {out} already holds; \
         export this dump into another directory (or with --from/--to)"
    )]
    UncountedSegments {
        dir: PathBuf,
        out: PathBuf,
        segments: u64,
    },
}

impl ExportError {
    /// The input or the output directory is at fault (exit code 2), not cupmon.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, ExportError::Parquet { .. })
    }

    pub(crate) fn io(path: impl Into<PathBuf>, what: &'static str, source: std::io::Error) -> Self {
        ExportError::Io {
            path: path.into(),
            what,
            source,
        }
    }

    pub(crate) fn parquet(path: impl Into<PathBuf>, source: parquet::errors::ParquetError) -> Self {
        // An I/O error under the writer is the output's fault, not Parquet's.
        match source {
            parquet::errors::ParquetError::External(e) => match e.downcast::<std::io::Error>() {
                Ok(io) => ExportError::io(path, "cannot write", *io),
                Err(other) => ExportError::Parquet {
                    path: path.into(),
                    source: parquet::errors::ParquetError::External(other),
                },
            },
            source => ExportError::Parquet {
                path: path.into(),
                source,
            },
        }
    }
}
