//! What one column costs to write with each encoding: CPU ns per value and bytes
//! per value (zstd 1 after the encoding), on the value shapes of the kernel rows:
//! a constant (run columns), a few values cycling with the step (grid, block,
//! registers), a growing id (correlation), sorted times, and durations.

use std::fs::File;
use std::sync::Arc;

use parquet::basic::{Compression, Encoding, Repetition, Type as PhysicalType, ZstdLevel};
use parquet::data_type::Int64Type;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use crate::rng::Rng;

fn shapes(n: usize) -> Vec<(&'static str, Vec<i64>)> {
    let mut rng = Rng::new(3);
    let step: Vec<i64> = (0..500).map(|_| 1 << rng.below(14)).collect();
    let mut t = 1_796_090_400_000_000_000i64;
    let mut c = 1000i64;
    vec![
        ("constant", vec![10_003; n]),
        (
            "cycling (step of 500 launches)",
            (0..n).map(|i| step[i % 500]).collect(),
        ),
        (
            "growing id (+1..4)",
            (0..n)
                .map(|_| {
                    c += 1 + rng.below(4) as i64;
                    c
                })
                .collect(),
        ),
        (
            "sorted times (gaps 2-60 us)",
            (0..n)
                .map(|_| {
                    t += 2_000 + rng.below(58_000) as i64;
                    t
                })
                .collect(),
        ),
        (
            "durations (lognormal, 3% jitter)",
            (0..n)
                .map(|i| (step[i % 500] as f64 * 10.0 * (1.0 + 0.03 * rng.normal())) as i64)
                .collect(),
        ),
    ]
}

fn cpu() -> f64 {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 * 1e-6;
    t(u.user_time()) + t(u.system_time())
}

/// (CPU s, bytes) of writing `values` as one INT64 column.
fn write(values: &[i64], encoding: Option<Encoding>, stats: EnabledStatistics) -> (f64, u64) {
    let schema = Arc::new(
        Type::group_type_builder("s")
            .with_fields(vec![Arc::new(
                Type::primitive_type_builder("v", PhysicalType::INT64)
                    .with_repetition(Repetition::REQUIRED)
                    .build()
                    .expect("type"),
            )])
            .build()
            .expect("schema"),
    );
    let mut b = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).expect("level")))
        .set_statistics_enabled(stats)
        .set_dictionary_enabled(encoding.is_none());
    if let Some(e) = encoding {
        b = b.set_encoding(e);
    }
    let file = tempfile_in_tmp();
    let t = cpu();
    let mut w = SerializedFileWriter::new(file, schema, Arc::new(b.build())).expect("writer");
    for chunk in values.chunks(1 << 20) {
        let mut rg = w.next_row_group().expect("rg");
        let mut c = rg.next_column().expect("col").expect("col");
        c.typed::<Int64Type>()
            .write_batch(chunk, None, None)
            .expect("write");
        c.close().expect("close");
        rg.close().expect("close");
    }
    let file = w.into_inner().expect("finish");
    let s = cpu() - t;
    (s, file.metadata().expect("metadata").len())
}

fn tempfile_in_tmp() -> File {
    let path =
        std::env::temp_dir().join(format!("bench-parquet-enc-{}.parquet", std::process::id()));
    let f = File::create(&path).expect("temp file");
    let _ = std::fs::remove_file(&path);
    f
}

pub fn run(n: usize, runs: usize) {
    println!("{n} INT64 values per column, zstd 1, median of {runs} runs: ns/value, bytes/value");
    let encodings = [
        ("dictionary", None),
        ("DELTA_BINARY_PACKED", Some(Encoding::DELTA_BINARY_PACKED)),
        ("PLAIN", Some(Encoding::PLAIN)),
    ];
    for (shape, values) in shapes(n) {
        let mut cells = Vec::new();
        for (name, enc) in encodings {
            for (sname, stats) in [
                ("page stats", EnabledStatistics::Page),
                ("chunk stats", EnabledStatistics::Chunk),
            ] {
                let mut times: Vec<f64> = Vec::new();
                let mut bytes = 0;
                for _ in 0..runs {
                    let (s, b) = write(&values, enc, stats);
                    times.push(s);
                    bytes = b;
                }
                times.sort_by(f64::total_cmp);
                cells.push(format!(
                    "{name} ({sname}) {:.1} ns, {:.3} B",
                    times[runs / 2] * 1e9 / n as f64,
                    bytes as f64 / n as f64
                ));
            }
        }
        println!("{shape}:\n  {}", cells.join("\n  "));
    }
}
