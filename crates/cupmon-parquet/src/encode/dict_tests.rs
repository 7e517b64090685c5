//! cupmon's own pages against the parquet crate's column writer: the same rows
//! written both ways, with the settings of the datasets' files, give the same file
//! bytes (pages, dictionary, statistics, offset and column index), and read back
//! with the crate's reader as written: NULLs among values, all NULL, one distinct
//! value, more than 65536 distinct values (17-bit indices), dense and hashed
//! integers, deltas that wrap, rows written in a given order, page boundaries.

use std::sync::Arc;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::SchemaDescriptor;

use super::{
    write_constant, Column, Constant, I32Col, I64Col, OptI64Col, OptStrCol, RowGroupOut, Scratch,
    StrCol, Strings, WriteCtx,
};
use crate::file_writer::writer_properties;
use crate::run_info::RUN_COLUMNS;
use crate::schema::{ColType, ColumnSpec, DatasetSpec, Enc};

const fn col(name: &'static str, ty: ColType, enc: Enc) -> ColumnSpec {
    ColumnSpec {
        name,
        ty,
        enc,
        doc: "",
    }
}

const SPEC: DatasetSpec = DatasetSpec {
    name: "t",
    doc: "",
    columns: &[
        col("name", ColType::Str, Enc::Dict),
        col("annotation", ColType::OptStr, Enc::Dict),
        col("grid", ColType::I32, Enc::Dict),
        col("bytes", ColType::I64, Enc::Dict),
        col("graph", ColType::OptI64, Enc::Dict),
        // The file settings give `start_ns` page statistics (a column index).
        col("start_ns", ColType::I64, Enc::Delta),
        col("duration", ColType::OptI64, Enc::Delta),
    ],
};

#[derive(Debug, Default)]
struct Table {
    name: StrCol,
    annotation: OptStrCol,
    grid: I32Col,
    bytes: I64Col,
    graph: OptI64Col,
    start_ns: I64Col,
    duration: OptI64Col,
}

/// `table` (in `order`) as one row group of a file; `own`: cupmon's dictionary
/// pages, else the crate's writer throughout. Returns the file's bytes.
fn write(
    table: &Table,
    run: &[Constant; 5],
    strings: &Strings,
    order: Option<&[u32]>,
    own: bool,
) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let props = Arc::new(writer_properties(&SPEC, Vec::new()));
    let schema = SPEC.parquet_schema();
    let descr = SchemaDescriptor::new(schema.clone());
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = SerializedFileWriter::new(file, schema, props.clone()).unwrap();
    let mut rg = writer.next_row_group().unwrap();
    let mut out = RowGroupOut::new(&mut rg, &descr, &props);
    let mut scratch = Scratch::default();
    // The crate's writer does what the properties say: dictionaries included.
    let enc = |e: Enc| if own { e } else { Enc::Plain };
    let rows = table.name.len();
    let ctx = WriteCtx {
        order,
        strings,
        shapes: None,
    };
    for (spec, value) in RUN_COLUMNS.iter().zip(run) {
        write_constant(
            spec.ty,
            enc(spec.enc),
            value,
            rows,
            &ctx,
            &mut scratch,
            &mut out,
        )
        .unwrap();
    }
    let s = &mut scratch;
    table.name.write(enc(Enc::Dict), &ctx, s, &mut out).unwrap();
    table
        .annotation
        .write(enc(Enc::Dict), &ctx, s, &mut out)
        .unwrap();
    table.grid.write(enc(Enc::Dict), &ctx, s, &mut out).unwrap();
    table
        .bytes
        .write(enc(Enc::Dict), &ctx, s, &mut out)
        .unwrap();
    table
        .graph
        .write(enc(Enc::Dict), &ctx, s, &mut out)
        .unwrap();
    let delta = enc(Enc::Delta);
    table.start_ns.write(delta, &ctx, s, &mut out).unwrap();
    table.duration.write(delta, &ctx, s, &mut out).unwrap();
    rg.close().unwrap();
    writer.close().unwrap();
    std::fs::read(&path).unwrap()
}

fn text(strings: &Strings, s: super::Sym) -> Field {
    Field::Str(String::from_utf8(strings.get(s).data().to_vec()).unwrap())
}

/// Each row's fields as the crate's reader should give them, in write order.
fn expected(
    table: &Table,
    run: &[Constant; 5],
    strings: &Strings,
    order: Option<&[u32]>,
) -> Vec<Vec<Field>> {
    let rows = table.name.len();
    let run: Vec<Field> = run
        .iter()
        .map(|c| match c {
            Constant::Null => Field::Null,
            Constant::I32(v) => Field::Int(*v),
            Constant::I64(v) => Field::Long(*v),
            Constant::Str(v) => Field::Str(String::from_utf8(v.data().to_vec()).unwrap()),
        })
        .collect();
    let long = |v: Option<i64>| v.map_or(Field::Null, Field::Long);
    (0..rows)
        .map(|r| {
            let i = order.map_or(r, |o| o[r] as usize);
            let mut row = run.clone();
            row.push(text(strings, table.name.0[i]));
            row.push(
                table
                    .annotation
                    .get(i)
                    .map_or(Field::Null, |s| text(strings, s)),
            );
            row.push(Field::Int(table.grid.0[i]));
            row.push(Field::Long(table.bytes.0[i]));
            row.push(long(table.graph.get(i)));
            row.push(Field::Long(table.start_ns.0[i]));
            row.push(long(table.duration.get(i)));
            row
        })
        .collect()
}

fn read(bytes: Vec<u8>) -> Vec<Vec<Field>> {
    let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            r.unwrap()
                .get_column_iter()
                .map(|(_, f)| f.clone())
                .collect()
        })
        .collect()
}

/// Both writers, the same bytes, and the rows read back as written.
fn check(table: &Table, run: &[Constant; 5], strings: &Strings, order: Option<&[u32]>) {
    let own = write(table, run, strings, order, true);
    let theirs = write(table, run, strings, order, false);
    let want = expected(table, run, strings, order);
    assert_eq!(read(own.clone()), want, "cupmon's pages read back");
    assert_eq!(read(theirs.clone()), want, "the crate's pages read back");
    if own != theirs {
        panic!(
            "the files differ ({} and {} bytes), first in column {}",
            own.len(),
            theirs.len(),
            first_difference(own, theirs)
        );
    }
}

/// The first column whose chunk differs between two files, for the message.
fn first_difference(a: Vec<u8>, b: Vec<u8>) -> String {
    let chunks = |f: Vec<u8>| {
        let bytes = bytes::Bytes::from(f);
        let reader = SerializedFileReader::new(bytes.clone()).unwrap();
        let rg = reader.metadata().row_group(0).clone();
        rg.columns()
            .iter()
            .map(|c| {
                let (start, len) = c.byte_range();
                let body = bytes.slice(start as usize..(start + len) as usize);
                (c.column_descr().name().to_owned(), body, format!("{c:?}"))
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (chunks(a), chunks(b));
    for (x, y) in a.iter().zip(&b) {
        if x.1 != y.1 {
            return format!("{} (chunk bytes)", x.0);
        }
    }
    for (x, y) in a.iter().zip(&b) {
        if x.2 != y.2 {
            return format!("{} (metadata):\n{}\n{}", x.0, x.2, y.2);
        }
    }
    "none: the footers".to_owned()
}

fn run_columns(job: Option<&str>) -> [Constant; 5] {
    let text = |s: &str| Constant::Str(s.as_bytes().to_vec().into());
    [
        job.map_or(Constant::Null, text),
        text("node07"),
        Constant::I32(3),
        Constant::Null,
        Constant::I64(4242),
    ]
}

#[test]
fn many_distinct_values_nulls_and_page_boundaries_match_the_crates_writer() {
    let mut strings = Strings::default();
    let names: Vec<_> = (0..70_000)
        .map(|k| strings.intern(&format!("kernel_{k}")))
        .collect();
    let notes: Vec<_> = (0..5)
        .map(|k| strings.intern(&format!("step {k}")))
        .collect();
    let rows = 250_000;
    let mut t = Table::default();
    let wide = [i64::MIN, -5, 7, 1 << 40, i64::MAX];
    for i in 0..rows {
        // Every name (17-bit indices), in runs of 3 and singly.
        t.name.push(names[(i / 3 * 7919 + i % 2) % names.len()]);
        // NULL in stretches of 1000 rows, else one of 5.
        t.annotation
            .push(((i / 1000) % 3 != 0).then(|| notes[(i / 7) % notes.len()]));
        t.grid.push(1 << (i % 13));
        // A range too wide for an array: hashed.
        t.bytes.push(wide[(i / 11) % wide.len()] ^ (i as i64 % 3));
        // 70,001 values over a narrow range, NULL in every fifth row.
        t.graph
            .push((i % 5 != 0).then_some(1_000_000_000_000 + (i % 70_001) as i64));
        // Times that mostly grow; durations NULL in stretches, some deltas wrap.
        let i64_i = i as i64;
        t.start_ns
            .push(1_796_090_400_000_000_000 + i64_i * 3_000 - (i64_i % 7) * 500);
        t.duration.push(match i % 1000 {
            0..100 => None,
            100 => Some(i64::MIN),
            101 => Some(i64::MAX),
            k => Some(20_000 + (k as i64 * 7919) % 100_000),
        });
    }
    check(&t, &run_columns(Some("job-1")), &strings, None);
    // Rows in another order (as the sort by time gives).
    let order: Vec<u32> = (0..rows as u32).rev().map(|i| i ^ 5).collect();
    check(&t, &run_columns(Some("job-1")), &strings, Some(&order));
}

#[test]
fn nulls_only_and_one_value_match_the_crates_writer() {
    let mut strings = Strings::default();
    let one = strings.intern("only");
    // One row past a page boundary: a last page of one row.
    for rows in [1, 7, 8, 9, 106_497] {
        let mut t = Table::default();
        for _ in 0..rows {
            t.name.push(one);
            t.annotation.push(None);
            t.grid.push(-1);
            t.bytes.push(i64::MIN);
            t.graph.push(None);
            t.start_ns.push(42);
            t.duration.push(None);
        }
        check(&t, &run_columns(None), &strings, None);
        // A value only in the last row.
        t.annotation.set(rows - 1, one);
        t.graph.fill(rows - 1, 9);
        t.duration.fill(rows - 1, -9);
        check(&t, &run_columns(Some("j")), &strings, None);
    }
}
