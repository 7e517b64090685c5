//! The Parquet export's speed and size, and the synthetic fleet it is measured on.
//!
//! usage:
//!   bench-parquet gen RUN_DIR [--ranks 16] [--kernels-per-rank 3000] [--seconds 360]
//!                 [--slow 1.25] [--seed 1] [--layout raw|segments]
//!       a `cupmon run` output of RANKS dumps (8 ranks per host), a planted slow rank
//!       per minute (RUN_DIR/planted.json), as raw files (default) or cupmon segments
//!   bench-parquet export OUT DUMP_OR_RUN... [--runs 3]
//!       cupmon_parquet::export_dump on each dump, one thread: CPU time (getrusage
//!       RUSAGE_THREAD) of a decode-only walk and of the export, rows/s, bytes/row
//!       (files, and column data without footers), bytes/row per column
//!   bench-parquet decode DUMP_OR_RUN... [--runs 5]
//!       the decode alone (walk_records, one thread): CPU s and ns per record
//!   bench-parquet memory OUT [--ranks 16] [--kernels-per-rank 6250000] [--seconds 300]
//!       the fleet's records fed straight to cupmon_parquet::RecordExport (no dump on
//!       disk; the generator's time is not counted), then OUT/cupmon.sql
//!
//!   bench-parquet encodings [--values 4000000] [--runs 3]
//!       one INT64 column of each value shape written with each encoding
//!   bench-parquet pages FILE
//!       a file's column chunks and pages (headers, metadata, first bytes), to diff
//!   bench-parquet edges DUMP_DIR [--kernels 150000] [--names 70000]
//!       one dump whose export holds the dictionary columns' edge cases (more rows
//!       than a page, more names than 16-bit indices, NULLs), for the Python tests
//!
//! Results and the commands that made them: bench/parquet/RESULTS.md.

mod edges;
mod encodings;
mod fleet;
mod measure;
mod pages;
// bench/compact's seeded generator, one copy for both benchmarks (this one needs no
// `exp`).
#[allow(dead_code)]
#[path = "../../compact/src/rng.rs"]
mod rng;
mod write;

use std::path::PathBuf;

use fleet::Fleet;

fn usage() -> ! {
    eprintln!(
        "usage: bench-parquet gen RUN_DIR [--ranks N] [--kernels-per-rank N] [--seconds S] [--slow F] [--seed N] [--layout raw|segments]\n       \
         bench-parquet export OUT DUMP_OR_RUN... [--runs N]\n       bench-parquet decode DUMP_OR_RUN... [--runs N]\n       \
         bench-parquet memory OUT [--ranks N] [--kernels-per-rank N] [--seconds S]\n       \
         bench-parquet pages FILE\n       \
         bench-parquet edges DUMP_DIR [--kernels N] [--names N]"
    );
    std::process::exit(2)
}

/// Positional arguments and `--name value` options.
fn parse(args: &[String]) -> (Vec<String>, std::collections::HashMap<String, String>) {
    let mut positional = Vec::new();
    let mut options = std::collections::HashMap::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.strip_prefix("--") {
            Some(name) => {
                let Some(v) = it.next() else { usage() };
                options.insert(name.to_owned(), v.clone());
            }
            None => positional.push(a.clone()),
        }
    }
    (positional, options)
}

fn option<T: std::str::FromStr>(
    options: &std::collections::HashMap<String, String>,
    name: &str,
    default: T,
) -> T {
    match options.get(name) {
        Some(v) => v.parse().unwrap_or_else(|_| usage()),
        None => default,
    }
}

fn fleet(options: &std::collections::HashMap<String, String>, kernels: u64, seconds: f64) -> Fleet {
    Fleet {
        ranks: option(options, "ranks", 16),
        ranks_per_host: 8,
        kernels_per_rank: option(options, "kernels-per-rank", kernels),
        seconds: option(options, "seconds", seconds),
        slow: option(options, "slow", 1.25),
        seed: option(options, "seed", 1),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        usage()
    };
    let (positional, options) = parse(rest);
    let result = match command.as_str() {
        "gen" => {
            let [run] = positional.as_slice() else {
                usage()
            };
            let fleet = fleet(&options, 3_000, 360.0);
            let layout = match options.get("layout").map(String::as_str) {
                None | Some("raw") => write::DumpLayout::Raw,
                Some("segments") => write::DumpLayout::Segments,
                Some(other) => {
                    eprintln!("bench-parquet: --layout {other}: expected raw or segments");
                    std::process::exit(2)
                }
            };
            let run = PathBuf::from(run);
            write::write_run(&run, &fleet, layout)
                .and_then(|records| {
                    write::write_planted(&run, &fleet)?;
                    println!(
                        "wrote {} ranks, {records} records, in {}",
                        fleet.ranks,
                        run.display()
                    );
                    Ok(())
                })
                .map_err(|e| e.to_string())
        }
        "export" => {
            let Some((out, inputs)) = positional.split_first() else {
                usage()
            };
            if inputs.is_empty() {
                usage()
            }
            measure::export(out.into(), inputs, option(&options, "runs", 3))
        }
        "decode" => {
            if positional.is_empty() {
                usage()
            }
            measure::decode(&positional, option(&options, "runs", 5))
        }
        "encodings" => {
            encodings::run(
                option(&options, "values", 4_000_000),
                option(&options, "runs", 3),
            );
            Ok(())
        }
        "edges" => {
            let [dir] = positional.as_slice() else {
                usage()
            };
            edges::write(
                std::path::Path::new(dir),
                option(&options, "kernels", 150_000),
                option(&options, "names", 70_000),
            )
            .map(|n| println!("wrote {n} kernel records in {dir}"))
            .map_err(|e| e.to_string())
        }
        "pages" => {
            let [file] = positional.as_slice() else {
                usage()
            };
            pages::run(file)
        }
        "memory" => {
            let [out] = positional.as_slice() else {
                usage()
            };
            measure::memory(out.into(), &fleet(&options, 6_250_000, 300.0))
        }
        _ => usage(),
    };
    if let Err(e) = result {
        eprintln!("bench-parquet: {e}");
        std::process::exit(1);
    }
}
