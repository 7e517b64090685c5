//! Where files go and what is in each: `<dataset>/day=/hour=/<host>.r<rank>.p<pid>.<seq>.parquet`,
//! one process per file, rows in time order, and cupmon.sql.

use cupmon_parquet::{sql_file_text, write_sql, Kinds};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::RowAccessor;

use crate::common::*;

#[test]
fn files_are_named_and_partitioned_by_time_host_rank_and_pid() {
    let out = tempfile::tempdir().unwrap();
    let mut opts = options(out.path());
    opts.host = Some("gpu-node7".to_owned());
    export(&fixture_dir("torch_mlp"), &opts).unwrap();
    let files = parquet_files(out.path());
    assert!(!files.is_empty());
    for f in &files {
        let rel = f
            .strip_prefix(out.path())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let parts: Vec<&str> = rel.split('/').collect();
        assert_eq!(parts.len(), 4, "{rel}");
        assert!(
            ["kernels", "memcpy", "memset", "api", "dumps"].contains(&parts[0]),
            "{rel}"
        );
        assert!(
            parts[1].starts_with("day=") && parts[1].len() == 14,
            "{rel}"
        );
        let hour: u32 = parts[2].strip_prefix("hour=").unwrap().parse().unwrap();
        assert!(hour < 24);
        assert_eq!(parts[3], "gpu-node7.rNA.p466.0000000000.parquet", "{rel}");
    }
    // Regression: torch_mlp's first kernels have start 0 (launched before collection):
    // they are not rows at the Unix epoch, in `day=1970-01-01`.
    assert!(!files
        .iter()
        .any(|f| f.to_string_lossy().contains("day=1970-01-01")));
    assert!(files.iter().any(|f| f
        .to_string_lossy()
        .contains("kernels/day=2026-11-29/hour=19/")));
    assert!(hidden_files(out.path()).is_empty());
    for r in rows(out.path(), "kernels") {
        assert_eq!(text(&r, "host").as_deref(), Some("gpu-node7"));
        assert_eq!(text(&r, "job").as_deref(), Some("test-job"));
        assert_eq!(int(&r, "rank"), None);
        assert_eq!(int(&r, "pid"), Some(466));
    }
}

#[test]
fn rows_are_in_time_order_within_each_file() {
    let out = tempfile::tempdir().unwrap();
    export(&fixture_dir("torch_mlp"), &options(out.path())).unwrap();
    for f in parquet_files(&out.path().join("kernels")) {
        let reader = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        let i = reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .position(|c| c.name() == "start_ns")
            .unwrap();
        let starts: Vec<i64> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().get_long(i).unwrap())
            .collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{}", f.display());
    }
}

#[test]
fn cupmon_sql_has_a_view_per_dataset_and_empty_typed_ones_for_missing_data() {
    let out = tempfile::tempdir().unwrap();
    let mut opts = options(out.path());
    opts.kinds = Kinds {
        kernel: true,
        memcpy: false,
        memset: false,
        api: false,
    };
    export(&fixture_dir("cuda_workload"), &opts).unwrap();
    write_sql(out.path()).unwrap();
    let text = std::fs::read_to_string(out.path().join("cupmon.sql")).unwrap();
    assert_eq!(
        text,
        sql_file_text(&std::path::absolute(out.path()).unwrap())
    );
    assert!(text.contains("CREATE OR REPLACE VIEW kernels AS SELECT *, start_ns + duration_ns AS end_ns FROM read_parquet("));
    assert!(text.contains("CREATE OR REPLACE VIEW dump_exports AS SELECT * FROM read_parquet("));
    assert!(text.contains("-- No memcpy files yet"));
    assert!(text.contains("NULL::BIGINT AS bytes"));
    for view in [
        "top_kernels",
        "busy_per_minute",
        "stragglers",
        "comm_overlap",
        "dumps",
    ] {
        assert!(
            text.contains(&format!("CREATE OR REPLACE VIEW {view} AS")),
            "{view}"
        );
    }
    assert!(hidden_files(out.path()).is_empty());
}

/// A moved or copied export: `cupmon.sql` held the export's absolute path, which
/// DuckDB read when it created the views, so `cupmon sql` failed anywhere else.
#[test]
fn cupmon_sql_names_no_path_so_a_moved_export_still_reads() {
    let out = tempfile::tempdir().unwrap();
    export(&fixture_dir("cuda_workload"), &options(out.path())).unwrap();
    write_sql(out.path()).unwrap();
    let text = std::fs::read_to_string(out.path().join("cupmon.sql")).unwrap();
    let abs = std::path::absolute(out.path()).unwrap();
    let dir = abs.to_str().unwrap();
    assert!(!text.contains(dir), "cupmon.sql names {dir}");
    assert!(text.contains("SET VARIABLE cupmon_dir = coalesce(getvariable('cupmon_dir'), '.');"));
    // Every view reads the directory through the variable.
    for line in text.lines().filter(|l| l.contains("read_parquet(")) {
        assert!(line.contains("getvariable('cupmon_dir') || '/"), "{line}");
    }
}
