//! The measurements: CPU time of one thread (getrusage RUSAGE_THREAD, user +
//! system) around the export, rows per second and bytes per row, and where the
//! bytes of the kernel files go (column chunks, footers).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cupmon_parquet::{export_dump, ExportOptions, Kinds, RecordExport, RunInfo};
use cupmon_records::{walk_records, Dump, KernelNameTable};
use nix::sys::resource::{getrusage, UsageWho};

use crate::fleet::{functions, Fleet, RankStream};
use crate::write::{host_of, pid_of};

/// This thread's CPU seconds so far.
fn cpu() -> f64 {
    let u = getrusage(UsageWho::RUSAGE_THREAD).expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 * 1e-6;
    t(u.user_time()) + t(u.system_time())
}

fn dumps_of(inputs: &[String]) -> Vec<PathBuf> {
    let mut dumps = Vec::new();
    for i in inputs {
        let p = PathBuf::from(i);
        if p.join(cupmon_records::dump::META_FILE).is_file() {
            dumps.push(p);
        } else {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(&p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|d| d.join(cupmon_records::dump::META_FILE).is_file())
                .collect();
            inside.sort();
            dumps.extend(inside);
        }
    }
    dumps
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `median [min..max]`.
fn spread(v: &mut [f64], scale: f64) -> String {
    let m = median(v);
    format!(
        "{:.3} [{:.3}..{:.3}]",
        m * scale,
        v[0] * scale,
        v[v.len() - 1] * scale
    )
}

/// The decode alone (every record walked, nothing kept), `runs` times: what every
/// reader of a dump pays before its own work (export, stats, traces).
pub fn decode(inputs: &[String], runs: usize) -> Result<(), String> {
    let dumps = dumps_of(inputs);
    if dumps.is_empty() {
        return Err("no dumps in the inputs".to_owned());
    }
    let (mut times, mut records) = (Vec::new(), 0u64);
    for _ in 0..runs {
        records = 0;
        let t = cpu();
        for d in &dumps {
            let dump = Dump::open(d).map_err(|e| e.to_string())?;
            walk_records(&dump, |_| {}, |_, _, _| records += 1).map_err(|e| e.to_string())?;
        }
        times.push(cpu() - t);
    }
    let mut per_record: Vec<f64> = times.iter().map(|s| s * 1e9 / records as f64).collect();
    println!(
        "{} dumps, {records} records, {runs} runs: decode CPU s {}, ns per record {}",
        dumps.len(),
        spread(&mut times, 1.0),
        spread(&mut per_record, 1.0)
    );
    Ok(())
}

pub fn export(out: PathBuf, inputs: &[String], runs: usize) -> Result<(), String> {
    let dumps = dumps_of(inputs);
    if dumps.is_empty() {
        return Err("no dumps in the inputs".to_owned());
    }
    // The raw buffers file, or a flight-recorder dump's segments.
    let raw: u64 = dumps
        .iter()
        .map(|d| Dump::open(d).map_or(0, |dump| dump.buffer_file_bytes()))
        .sum();
    println!(
        "{} dumps, {:.1} MB of buffer files, {runs} runs",
        dumps.len(),
        raw as f64 / 1e6
    );
    let (mut decode, mut exports) = (Vec::new(), Vec::new());
    let mut rows: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for run in 0..runs {
        let t = cpu();
        let mut records = 0u64;
        for d in &dumps {
            let dump = Dump::open(d).map_err(|e| e.to_string())?;
            walk_records(&dump, |_| {}, |_, _, _| records += 1).map_err(|e| e.to_string())?;
        }
        decode.push(cpu() - t);
        let _ = std::fs::remove_dir_all(&out);
        let opts = ExportOptions {
            out: out.clone(),
            kinds: Kinds::default(),
            from_ns: None,
            to_ns: None,
            job: Some("bench".to_owned()),
            host: None,
            default_host: "bench".to_owned(),
        };
        let t = cpu();
        rows.clear();
        for d in &dumps {
            let e = export_dump(d, &opts, |_| {}).map_err(|e| e.to_string())?;
            for (name, totals) in e.datasets {
                let r = rows.entry(name).or_default();
                r.0 += totals.rows;
                r.1 += totals.bytes;
            }
        }
        exports.push(cpu() - t);
        let kernels = rows.get("kernels").map_or(0, |r| r.0);
        println!(
            "run {run}: {records} records; decode only {:.3} s, export {:.3} s CPU: {:.2} M kernel rows/s",
            decode[run],
            exports[run],
            kernels as f64 / exports[run] / 1e6
        );
    }
    let kernels = rows.get("kernels").map_or(0, |r| r.0);
    let all: u64 = rows.values().map(|r| r.0).sum();
    let mut per_kernel: Vec<f64> = exports.iter().map(|s| kernels as f64 / s / 1e6).collect();
    let mut per_row: Vec<f64> = exports.iter().map(|s| all as f64 / s / 1e6).collect();
    println!("decode only, CPU s: {}", spread(&mut decode, 1.0));
    println!("export, CPU s:      {}", spread(&mut exports, 1.0));
    println!("M kernel rows/s:    {}", spread(&mut per_kernel, 1.0));
    println!("M rows/s (all):     {}", spread(&mut per_row, 1.0));
    for (name, (r, b)) in &rows {
        println!(
            "  {name:<8} {r:>12} rows {b:>13} bytes {:>8.2} B/row",
            *b as f64 / *r as f64
        );
    }
    columns(&out.join("kernels"))
}

/// Bytes per row of each column of the kernel files, and of what is not column
/// data (footers, page headers' share is inside the chunks).
fn columns(dir: &Path) -> Result<(), String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                files.push(p);
            }
        }
    }
    let mut by_column: Vec<(String, u64)> = Vec::new();
    let (mut rows, mut total, mut data) = (0i64, 0u64, 0u64);
    for f in &files {
        let file = std::fs::File::open(f).map_err(|e| e.to_string())?;
        total += file.metadata().map_err(|e| e.to_string())?.len();
        let meta = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&file)
            .map_err(|e| e.to_string())?;
        for rg in meta.row_groups() {
            rows += rg.num_rows();
            for (i, c) in rg.columns().iter().enumerate() {
                let name = c.column_descr().name().to_owned();
                if by_column.len() <= i {
                    by_column.push((name, 0));
                }
                by_column[i].1 += c.compressed_size() as u64;
                data += c.compressed_size() as u64;
            }
        }
    }
    if rows == 0 {
        return Ok(());
    }
    let per = |b: u64| b as f64 / rows as f64;
    println!(
        "kernel files: {} files, {rows} rows: {:.3} B/row in all, {:.3} B/row column data, {:.3} B/row footers",
        files.len(),
        per(total),
        per(data),
        per(total - data)
    );
    by_column.sort_by_key(|b| std::cmp::Reverse(b.1));
    let listed: Vec<String> = by_column
        .iter()
        .filter(|(_, b)| per(*b) >= 0.005)
        .map(|(n, b)| format!("{n} {:.3}", per(*b)))
        .collect();
    println!("  B/row by column: {}", listed.join(", "));
    Ok(())
}

pub fn memory(out: PathBuf, fleet: &Fleet) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let mut names = KernelNameTable::new();
    for f in functions(fleet.seed) {
        names.insert(f.ptr, f.name);
    }
    let annotations = BTreeMap::new();
    let (mut seconds, mut kernels, mut bytes, mut all_rows) = (0.0, 0u64, 0u64, 0u64);
    // Of `seconds`: in `finish` (the row groups not written yet, and the files).
    let mut finishing = 0.0;
    for rank in 0..fleet.ranks {
        let run = RunInfo {
            job: Some("bench".to_owned()),
            host: host_of(fleet, rank),
            rank: Some(rank as i32),
            local_rank: Some((rank % fleet.ranks_per_host) as i32),
            pid: i64::from(pid_of(rank)),
        };
        let mut export = RecordExport::new(
            &out,
            &run,
            "0000000000",
            Kinds::default(),
            (None, None),
            &names,
            &annotations,
            Vec::new(),
        );
        let mut stream = RankStream::new(fleet, rank);
        let mut chunk_no = 0;
        while let Some(chunk) = stream.next_chunk() {
            let t = cpu();
            for r in &chunk {
                export.record(chunk_no, r).map_err(|e| e.to_string())?;
            }
            seconds += cpu() - t;
            chunk_no += 1;
        }
        let t = cpu();
        let totals = export.finish(None).map_err(|e| e.to_string())?;
        seconds += cpu() - t;
        finishing += cpu() - t;
        kernels += totals.rows("kernels");
        for (_, d) in &totals.datasets {
            bytes += d.bytes;
            all_rows += d.rows;
        }
        eprint!("\rrank {rank}: {kernels} kernel rows so far   ");
    }
    eprintln!();
    cupmon_parquet::write_sql(&out).map_err(|e| e.to_string())?;
    println!(
        "{} ranks, {kernels} kernel rows ({all_rows} rows): export {seconds:.3} s CPU, {:.2} M kernel rows/s, {:.3} B/row (all datasets' files / all rows)",
        fleet.ranks,
        kernels as f64 / seconds / 1e6,
        bytes as f64 / all_rows as f64
    );
    println!(
        "  of which in RecordExport::finish {finishing:.3} s (row groups written there and the files closed), in RecordExport::record {:.3} s",
        seconds - finishing
    );
    columns(&out.join("kernels"))
}
