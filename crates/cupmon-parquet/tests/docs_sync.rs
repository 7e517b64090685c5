//! The docs generated from the schema are the ones checked in.

use std::path::PathBuf;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

#[test]
fn docs_parquet_md_lists_every_column() {
    let doc = std::fs::read_to_string(repo("docs/parquet.md")).unwrap();
    let (begin, end) = ("<!-- schema:begin -->\n", "<!-- schema:end -->");
    let start = doc.find(begin).expect("schema markers in docs/parquet.md") + begin.len();
    let stop = doc[start..].find(end).expect("schema:end marker") + start;
    let want = cupmon_parquet::schema_markdown();
    assert!(
        doc[start..stop] == want,
        "docs/parquet.md's schema tables are out of date; paste the output of \
         `cargo run -p cupmon-parquet --example docs -- schema` between the markers:\n{want}"
    );
}

#[test]
fn the_trino_tables_are_the_schemas() {
    let sql = std::fs::read_to_string(repo("docs/sql/trino/tables.sql")).unwrap();
    assert!(
        sql == cupmon_parquet::trino_tables(),
        "docs/sql/trino/tables.sql is out of date: cargo run -p cupmon-parquet --example docs -- trino > docs/sql/trino/tables.sql"
    );
}
