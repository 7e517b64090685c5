//! `cupmon sql OUT ...`: the views of `OUT/cupmon.sql`, queried through DuckDB's
//! Python package. No SQL engine is compiled into cupmon (DataFusion measured +99 MB
//! and a 14-minute build, DuckDB's bundled build over 15 minutes); the runner is
//! `python/cupmon/sql.py`, passed to Python whole.

use std::process::Command;

use anyhow::Result;
use cupmon_config::env_vars;

use crate::cli::SqlArgs;
use crate::exit::BadInput;

/// The runner (also `cupmon.sql` in the Python package).
const RUNNER: &str = include_str!("../../../../python/cupmon/sql.py");

pub fn run(args: &SqlArgs) -> Result<i32> {
    if !args.dir.join(cupmon_parquet::SQL_FILE).is_file() {
        return Err(BadInput(format!(
            "{}: no {} in it; is it a `cupmon export-parquet` output?",
            args.dir.display(),
            cupmon_parquet::SQL_FILE
        ))
        .into());
    }
    let python = std::env::var_os(env_vars::PYTHON)
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.arg("-c").arg(RUNNER).arg(&args.dir);
    match &args.query {
        Some(q) => {
            cmd.arg("--command").arg(q);
        }
        None => {
            let flag = if args.top_kernels {
                "--top-kernels"
            } else if args.busy {
                "--busy"
            } else if args.stragglers {
                "--stragglers"
            } else {
                "--comm-overlap"
            };
            cmd.arg(flag);
        }
    }
    cmd.arg("--top").arg(args.top.to_string());
    cmd.arg("--max-rows").arg(args.max_rows.to_string());
    if args.csv {
        cmd.arg("--csv");
    }
    let status = cmd.status().map_err(|e| {
        anyhow::anyhow!(
            "cannot run {} ({e}): cupmon sql needs Python 3 with the duckdb package \
             (pip install 'cupmon[sql]'); set {} to its interpreter",
            python.to_string_lossy(),
            env_vars::PYTHON
        )
    })?;
    Ok(status.code().unwrap_or(1))
}
