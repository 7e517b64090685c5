//! Re-running on a growing dump adds only the new chunks; `--from/--to` slices; the
//! refusals that keep a row from being written twice.

use std::path::Path;

use cupmon_parquet::ExportError;
use cupmon_records::dump::{
    ChunkWriter, KERNEL_NAMES_FILE, META_FILE, RAW_BUFFERS_FILE, USER_ANNOTATIONS_FILE,
};
use cupmon_records::{Dump, MetaFile};

use crate::common::*;

/// The fixture's chunks as (completion, data).
fn fixture_chunks(name: &str) -> Vec<(cupmon_records::BufferCompletion, Vec<u8>)> {
    let dump = Dump::open(fixture_dir(name)).unwrap();
    let mut reader = dump.chunks().unwrap();
    let mut chunks = Vec::new();
    while let Some(c) = reader.next_chunk().unwrap() {
        chunks.push((c.header.completion, c.data.to_vec()));
    }
    chunks
}

/// A copy of the fixture's dump holding its first `n` chunks.
fn partial_dump(dir: &Path, fixture: &str, n: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for f in [META_FILE, KERNEL_NAMES_FILE, USER_ANNOTATIONS_FILE] {
        let from = fixture_dir(fixture).join(f);
        if from.exists() {
            std::fs::copy(from, dir.join(f)).unwrap();
        }
    }
    let mut w = ChunkWriter::create(dir.join(RAW_BUFFERS_FILE)).unwrap();
    for (completion, data) in fixture_chunks(fixture).iter().take(n) {
        w.write_chunk(*completion, data).unwrap();
    }
    w.finish().unwrap();
}

/// Append the fixture's chunks from `from` on.
fn grow(dir: &Path, fixture: &str, from: usize) {
    let mut w = ChunkWriter::append(dir.join(RAW_BUFFERS_FILE), from as u32).unwrap();
    for (completion, data) in fixture_chunks(fixture).iter().skip(from) {
        w.write_chunk(*completion, data).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn a_rerun_on_a_grown_dump_adds_only_the_new_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let (dump, out) = (tmp.path().join("4242"), tmp.path().join("out"));
    // cuda_workload: torch_mlp has records on Kineto's clock, converted with a fit
    // of the dump's clock samples, which a dump that grows refines (its rows would
    // differ by microseconds from one export to the next).
    let fixture = "cuda_workload";
    let total = fixture_chunks(fixture).len();
    assert!(total >= 2, "the fixture has {total} chunks");
    let first_part = total - 1;
    partial_dump(&dump, fixture, first_part);
    let first = export(&dump, &options(&out)).unwrap();
    let files_before = parquet_files(&out);
    let bytes_before: Vec<Vec<u8>> = files_before
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    grow(&dump, fixture, first_part);
    let second = export(&dump, &options(&out)).unwrap();
    assert_eq!(second.chunks_already_exported, first_part as u64);
    // The earlier files are untouched, the new ones named after the first new chunk.
    for (f, b) in files_before.iter().zip(&bytes_before) {
        assert_eq!(&std::fs::read(f).unwrap(), b, "{} changed", f.display());
    }
    let new: Vec<_> = parquet_files(&out)
        .into_iter()
        .filter(|f| !files_before.contains(f))
        .collect();
    assert!(!new.is_empty());
    for f in &new {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.ends_with(&format!(".{first_part:010}.parquet")),
            "{name}"
        );
    }
    // Together: every row once, as a whole export gives.
    let whole = tempfile::tempdir().unwrap();
    export(&fixture_dir(fixture), &options(whole.path())).unwrap();
    for dataset in ["kernels", "memcpy", "memset", "api"] {
        let mut a: Vec<_> = rows(&out, dataset)
            .into_iter()
            .map(|r| format!("{r:?}"))
            .collect();
        let mut b: Vec<_> = rows(whole.path(), dataset)
            .into_iter()
            .map(|r| format!("{r:?}"))
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a.len(), b.len(), "{dataset}");
        if let Some((x, y)) = a.iter().zip(&b).find(|(x, y)| x != y) {
            panic!("{dataset}: a row differs:\n{x}\n{y}");
        }
    }
    assert_eq!(
        rows_written(&first, "kernels") + rows_written(&second, "kernels"),
        rows(whole.path(), "kernels").len() as u64
    );
    // Nothing new: nothing written, not even a dumps row.
    let before = parquet_files(&out);
    let third = export(&dump, &options(&out)).unwrap();
    assert_eq!(third.datasets.iter().map(|(_, t)| t.rows).sum::<u64>(), 0);
    assert_eq!(parquet_files(&out), before);
    assert_eq!(
        rows(&out, "dumps").len(),
        2,
        "one dumps row per export that took chunks"
    );
}

#[test]
fn a_slice_keeps_the_rows_that_start_inside_it() {
    let out = tempfile::tempdir().unwrap();
    let dir = fixture_dir("cuda_workload");
    let all = tempfile::tempdir().unwrap();
    export(&dir, &options(all.path())).unwrap();
    let mut starts: Vec<i64> = rows(all.path(), "kernels")
        .iter()
        .map(|r| int(r, "start_ns").unwrap())
        .collect();
    starts.sort();
    let (from, to) = (starts[3], starts[10]);
    let mut opts = options(out.path());
    (opts.from_ns, opts.to_ns) = (Some(from), Some(to));
    let e = export(&dir, &opts).unwrap();
    let got: Vec<i64> = rows(out.path(), "kernels")
        .iter()
        .map(|r| int(r, "start_ns").unwrap())
        .collect();
    assert_eq!(got.len(), 7);
    assert!(got.iter().all(|&t| (from..to).contains(&t)));
    assert!(e.rows_outside_slice > 0);
    for r in rows(out.path(), "api") {
        assert!((from..to).contains(&int(&r, "start_ns").unwrap()));
    }
    let d = &rows(out.path(), "dumps")[0];
    assert_eq!((int(d, "from_ns"), int(d, "to_ns")), (Some(from), Some(to)));
    // The same slice again replaces its files; an overlapping one is refused, and
    // so is a whole export on top of a slice.
    let files = parquet_files(out.path());
    export(&dir, &opts).unwrap();
    assert_eq!(parquet_files(out.path()), files);
    let mut overlapping = options(out.path());
    overlapping.from_ns = Some(starts[8]);
    let err = export(&dir, &overlapping).unwrap_err();
    assert!(matches!(err, ExportError::Overlap { .. }), "{err}");
    assert!(err.is_bad_input());
    assert!(err.to_string().contains("twice"), "{err}");
    let err = export(&dir, &options(out.path())).unwrap_err();
    assert!(matches!(err, ExportError::Overlap { .. }), "{err}");
    // A slice after it is fine.
    let mut after = options(out.path());
    after.from_ns = Some(to);
    export(&dir, &after).unwrap();
    assert_eq!(rows(out.path(), "kernels").len(), starts.len() - 3);
}

#[test]
fn another_dump_with_the_same_host_rank_and_pid_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, out) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("out"),
    );
    partial_dump(&a, "cuda_workload", 1);
    partial_dump(&b, "cuda_workload", 1);
    // b: a later session of a process with the same pid.
    let mut meta = MetaFile::read(b.join(META_FILE)).unwrap();
    let start = meta.session_start_unix_ns().unwrap();
    meta.set("session_start_unix_ns", start + 1);
    meta.write(b.join(META_FILE)).unwrap();
    export(&a, &options(&out)).unwrap();
    let err = export(&b, &options(&out)).unwrap_err();
    assert!(matches!(err, ExportError::SameName { .. }), "{err}");
    // With another host name it goes in beside.
    let mut opts = options(&out);
    opts.host = Some("other".to_owned());
    export(&b, &opts).unwrap();
}

#[test]
fn an_unwritable_output_fails_without_leaving_temporary_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // `kernels` is a file: its directory cannot be made.
    std::fs::write(out.join("kernels"), b"in the way").unwrap();
    let err = export(&fixture_dir("torch_mlp"), &options(&out)).unwrap_err();
    assert!(err.is_bad_input(), "{err}");
    assert!(err.to_string().contains("kernels"), "{err}");
    assert!(hidden_files(&out).is_empty(), "{:?}", hidden_files(&out));
}
