//! The run columns: which job, host and process a file's rows come from. They lead
//! every dataset and are the same in every row of a file (one file holds one
//! process's rows), so they cost a few bytes per file. The strings are
//! dictionary-encoded although hashing every value costs the export time: DuckDB
//! groups by a dictionary column without reading each string (top_kernels on 100M
//! rows: 15 s with PLAIN strings, bench/parquet/RESULTS.md); the integers are
//! zero deltas.

use parquet::data_type::ByteArray;

use crate::encode::Constant;
use crate::schema::{ColType, ColumnSpec, Enc};

/// Where a dump's rows come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// The job's id (`--job`), when given.
    pub job: Option<String>,
    pub host: String,
    /// The process's rank in a distributed job, when it had one.
    pub rank: Option<i32>,
    pub local_rank: Option<i32>,
    pub pid: i64,
}

/// The run columns, first in every dataset.
pub const RUN_COLUMNS: &[ColumnSpec] = &[
    ColumnSpec {
        name: "job",
        ty: ColType::OptStr,
        enc: Enc::Dict,
        doc: "the job's id (`--job`); NULL when not given",
    },
    ColumnSpec {
        name: "host",
        ty: ColType::Str,
        enc: Enc::Dict,
        doc: "the host the process ran on (`--host`, default: the dump's `hostname` meta key, else the exporting host's name)",
    },
    ColumnSpec {
        name: "rank",
        ty: ColType::OptI32,
        enc: Enc::Delta,
        doc: "the process's rank (the dump's `rank` / `distributedInfo`, else the `rank<R>-<pid>` directory name); NULL outside a distributed job",
    },
    ColumnSpec {
        name: "local_rank",
        ty: ColType::OptI32,
        enc: Enc::Delta,
        doc: "its rank on the host (`distributedInfo.local_rank`); NULL when unknown",
    },
    ColumnSpec {
        name: "pid",
        ty: ColType::I64,
        enc: Enc::Delta,
        doc: "the process id (the dump's meta)",
    },
];

impl RunInfo {
    /// The run columns' values, in [`RUN_COLUMNS`] order.
    pub fn constants(&self) -> [Constant; 5] {
        let text = |s: &str| Constant::Str(ByteArray::from(s.as_bytes().to_vec()));
        let int = |v: Option<i32>| v.map_or(Constant::Null, Constant::I32);
        [
            self.job.as_deref().map_or(Constant::Null, text),
            text(&self.host),
            int(self.rank),
            int(self.local_rank),
            Constant::I64(self.pid),
        ]
    }

    /// `<host>.r<rank>.p<pid>`: the start of this process's file names (`rNA`
    /// without a rank; characters of the host other than letters, digits, `-`, `_`
    /// become `_`).
    pub fn safe_file_stem(&self) -> String {
        let host: String = self
            .host
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let rank = self.rank.map_or_else(|| "NA".to_owned(), |r| r.to_string());
        format!("{host}.r{rank}.p{}", self.pid)
    }
}
