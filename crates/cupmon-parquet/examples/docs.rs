//! Print the generated documentation: `cargo run -p cupmon-parquet --example docs --
//! schema` (the tables of docs/parquet.md) or `-- trino` (docs/sql/trino/tables.sql).

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("schema") => print!("{}", cupmon_parquet::schema_markdown()),
        Some("trino") => print!("{}", cupmon_parquet::trino_tables()),
        _ => {
            eprintln!("usage: docs schema|trino");
            std::process::exit(2);
        }
    }
}
