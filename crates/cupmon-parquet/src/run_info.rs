//! The run columns: which job, host and process a file's rows come from. They lead
//! every dataset and are the same in every row of a file (one file holds one
//! process's rows), so they cost a few bytes per file.

use parquet::data_type::ByteArray;

use crate::columns::Constant;
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
        enc: Enc::Dict,
        doc: "the process's rank (the dump's `rank` / `distributedInfo`, else the `rank<R>-<pid>` directory name); NULL outside a distributed job",
    },
    ColumnSpec {
        name: "local_rank",
        ty: ColType::OptI32,
        enc: Enc::Dict,
        doc: "its rank on the host (`distributedInfo.local_rank`); NULL when unknown",
    },
    ColumnSpec {
        name: "pid",
        ty: ColType::I64,
        enc: Enc::Dict,
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
    /// without a rank).
    pub fn file_stem(&self) -> String {
        let rank = self
            .rank
            .map_or_else(|| "NA".to_owned(), |r| r.to_string());
        format!("{}.r{rank}.p{}", self.host, self.pid)
    }
}
