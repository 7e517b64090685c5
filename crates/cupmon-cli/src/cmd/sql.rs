//! `cupmon sql OUT ...`: the views of `OUT/cupmon.sql`, queried through DuckDB's
//! Python package. No SQL engine is compiled into cupmon (DataFusion measured +99 MB
//! and a 14-minute build, DuckDB's bundled build over 15 minutes); the runner is
//! `python/cupmon/sql.py`, passed to Python whole.

use std::io::Write;
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
            } else if args.top_lines {
                "--top-lines"
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
    // Kernel names as `cupmon stats` shortens them: the rows come back as JSON
    // and the table is printed here (cupmon_demangle::short_name, one function).
    let shorten = args.top_kernels && !args.csv && !args.full_names;
    if shorten {
        cmd.arg("--json-rows");
        cmd.stdout(std::process::Stdio::piped());
    }
    let child = cmd.spawn().map_err(|e| {
        anyhow::anyhow!(
            "cannot run {} ({e}): cupmon sql needs Python 3 with the duckdb package \
             (pip install 'cupmon[sql]'); set {} to its interpreter",
            python.to_string_lossy(),
            env_vars::PYTHON
        )
    })?;
    let output = child.wait_with_output()?;
    if shorten && output.status.success() {
        print_table(&output.stdout, super::stats::terminal_columns())?;
    }
    Ok(output.status.code().unwrap_or(1))
}

/// The runner's `--json-rows` (a line of column names, then a line per row) as
/// an aligned table, the `name` column shortened to what `columns` leave it
/// (at least 30 characters).
fn print_table(json_rows: &[u8], columns: usize) -> Result<()> {
    let text = String::from_utf8_lossy(json_rows);
    let mut table: Vec<Vec<String>> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: Vec<serde_json::Value> = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("cupmon sql's runner wrote {line:?}: {e}"))?;
        table.push(
            row.iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => "NULL".to_owned(),
                    other => other.to_string(),
                })
                .collect(),
        );
    }
    let Some(ncols) = table.first().map(Vec::len) else {
        return Ok(());
    };
    let width = |table: &[Vec<String>], i: usize| {
        table
            .iter()
            .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
            .max()
            .unwrap_or(0)
    };
    if let Some(at) = table[0].iter().position(|c| c == "name") {
        let others: usize = (0..ncols)
            .filter(|&i| i != at)
            .map(|i| width(&table, i) + 2)
            .sum();
        let room = columns.saturating_sub(others).max(30);
        for row in table.iter_mut().skip(1) {
            if let Some(name) = row.get_mut(at) {
                *name = cupmon_demangle::short_name(name, room).into_owned();
            }
        }
    }
    let widths: Vec<usize> = (0..ncols).map(|i| width(&table, i)).collect();
    let mut out = std::io::stdout().lock();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, &w)| format!("{c:<w$}"))
            .collect();
        match writeln!(out, "{}", cells.join("  ").trim_end()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            other => other?,
        }
    }
    Ok(())
}
