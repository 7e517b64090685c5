//! The dump files are byte-compatible with the fixtures (PyTorch monitor's CUPMMETA and
//! CUPMRBUF v2, cupmon's side files): read then written back, every file is identical.

use std::fs;
use std::io::Read;

use super::common::{decode_all, fixture_dir, FIXTURES};
use cupmon_records::dump::{
    read_user_annotations, user_annotations_bytes, write_user_annotations, KERNEL_NAMES_FILE,
    META_FILE, RAW_BUFFERS_FILE, USER_ANNOTATIONS_FILE,
};
use cupmon_records::{
    ChunkReader, ChunkWriter, Dump, DumpWarning, DumpWriter, KernelNameTable, MetaFile,
};

#[test]
fn meta_round_trips_byte_for_byte_and_keeps_unknown_keys() {
    for fixture in FIXTURES {
        let path = fixture_dir(fixture).join(META_FILE);
        let meta = MetaFile::read(&path).unwrap();
        assert_eq!(meta.to_bytes(), fs::read(&path).unwrap(), "{fixture}");
        assert_eq!(meta.cupti_version(), Some(130_001));
        assert_eq!(meta.activities(), [10, 1, 2, 4, 5, 39, 17, 36, 38]);
        assert_eq!(meta.buffer_size(), Some(1_048_576));
        assert_eq!(meta.timestamp_mode(), Some("cupti_default"));
        assert_eq!(meta.dropped_records(), None);
        // `raw_buffer_dump` and `meta_version` are keys cupmon does not interpret.
        assert_eq!(meta.json()["raw_buffer_dump"], true);
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut meta = MetaFile::read(fixture_dir("torch_mlp").join(META_FILE)).unwrap();
    meta.set("dropped_records", 12)
        .set("cupmon_version", "0.1.0")
        .set("cupti_library", "/x/libcupti.so.13");
    meta.write(tmp.path().join(META_FILE)).unwrap();
    let back = MetaFile::read(tmp.path().join(META_FILE)).unwrap();
    assert_eq!(back, meta);
    assert_eq!(back.dropped_records(), Some(12));
    assert_eq!(back.cupti_library(), Some("/x/libcupti.so.13"));
    assert_eq!(back.json()["pid"], 466);
}

#[test]
fn side_files_round_trip_byte_for_byte() {
    for fixture in FIXTURES {
        let dir = fixture_dir(fixture);
        let names = KernelNameTable::read(dir.join(KERNEL_NAMES_FILE));
        let mut out = Vec::new();
        names.write_to(&mut out).unwrap();
        assert_eq!(
            out,
            fs::read(dir.join(KERNEL_NAMES_FILE)).unwrap(),
            "{fixture}"
        );
    }
    let dir = fixture_dir("cuda_workload");
    let annotations = read_user_annotations(dir.join(USER_ANNOTATIONS_FILE)).unwrap();
    assert_eq!(annotations[&1001], "iteration 1");
    assert_eq!(
        user_annotations_bytes(&annotations),
        fs::read(dir.join(USER_ANNOTATIONS_FILE)).unwrap()
    );
}

#[test]
fn chunks_round_trip_byte_for_byte() {
    for fixture in FIXTURES {
        let path = fixture_dir(fixture).join(RAW_BUFFERS_FILE);
        let mut reader = ChunkReader::open(&path).unwrap();
        let mut writer = ChunkWriter::new(Vec::new());
        while let Some(chunk) = reader.next_chunk().unwrap() {
            let header = writer
                .write_chunk(chunk.header.completion, chunk.data)
                .unwrap();
            assert_eq!(header, chunk.header);
        }
        assert_eq!(
            writer.finish().unwrap(),
            fs::read(&path).unwrap(),
            "{fixture}"
        );
    }
}

/// A reader that hands out at most 7 bytes per call and whose length is unknown.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn chunk_reader_without_a_known_length_reads_the_same_and_detects_truncation() {
    let bytes = fs::read(fixture_dir("torch_mlp").join(RAW_BUFFERS_FILE)).unwrap();
    let mut reader = ChunkReader::new(Trickle(&bytes), RAW_BUFFERS_FILE, None);
    let mut sizes = Vec::new();
    while let Some(chunk) = reader.next_chunk().unwrap() {
        sizes.push(chunk.data.len());
    }
    assert_eq!(sizes, [33480, 97704, 112]);
    let cut = &bytes[..bytes.len() - 10];
    let mut reader = ChunkReader::new(Trickle(cut), RAW_BUFFERS_FILE, None);
    let mut n = 0;
    while reader.next_chunk().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 2);
    let t = reader.truncation().unwrap();
    assert_eq!(
        (t.chunk, t.byte, t.needed, t.available),
        (2, 131_280, 160, 150)
    );
}

#[test]
fn chunk_reader_without_a_known_length_resynchronises_after_a_bad_header() {
    let mut bytes = fs::read(fixture_dir("torch_mlp").join(RAW_BUFFERS_FILE)).unwrap();
    bytes[33528..][..8].copy_from_slice(b"CUPMRBUX");
    let mut reader = ChunkReader::new(Trickle(&bytes), RAW_BUFFERS_FILE, None);
    let mut got = Vec::new();
    while let Some(chunk) = reader.next_chunk().unwrap() {
        got.push((
            chunk.number,
            chunk.header.index,
            chunk.file_offset,
            chunk.data.len(),
        ));
    }
    assert_eq!(got, [(0, 0, 0, 33480), (1, 2, 131_280, 112)]);
    let [DumpWarning::Skipped(s)] = reader.warnings() else {
        panic!("{:?}", reader.warnings())
    };
    assert_eq!((s.from, s.to, s.resumed), (33528, 131_280, true));
    assert_eq!(reader.truncation(), None);
}

#[test]
fn dump_writer_writes_a_dump_that_decodes_to_the_same_window() {
    for fixture in FIXTURES {
        let src = Dump::open(fixture_dir(fixture)).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut w = DumpWriter::create(tmp.path(), src.meta()).unwrap();
        let mut chunks = src.chunks().unwrap();
        while let Some(chunk) = chunks.next_chunk().unwrap() {
            w.write_chunk(chunk.header.completion, chunk.data).unwrap();
        }
        for (ptr, name) in src.kernel_names().sorted() {
            w.add_kernel_name(ptr, name).unwrap();
            w.add_kernel_name(ptr, "ignored: pointer already written")
                .unwrap();
        }
        if !src.user_annotations().unwrap().is_empty() {
            w.write_user_annotations(src.user_annotations().unwrap())
                .unwrap();
        }
        w.finish().unwrap();
        for file in [META_FILE, RAW_BUFFERS_FILE, KERNEL_NAMES_FILE] {
            let want = fs::read(fixture_dir(fixture).join(file)).unwrap();
            assert_eq!(
                fs::read(tmp.path().join(file)).unwrap(),
                want,
                "{fixture} {file}"
            );
        }
        let (a, _) = decode_all(fixture_dir(fixture)).unwrap();
        let (b, _) = decode_all(tmp.path()).unwrap();
        assert_eq!(a, b);
        let annotations = |d| Dump::open(d).unwrap().user_annotations().unwrap().clone();
        assert_eq!(
            annotations(fixture_dir(fixture)),
            annotations(tmp.path().to_path_buf())
        );
    }
}

/// Whole-file writers replace the file through a rename (a kill mid-write leaves the old
/// file): a hard link to the old file still holds the old bytes afterwards, and no
/// temporary file is left.
#[test]
fn whole_file_writers_replace_the_file_by_rename_never_truncate_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let meta_path = dir.join(META_FILE);
    let names_path = dir.join(KERNEL_NAMES_FILE);
    let notes_path = dir.join(USER_ANNOTATIONS_FILE);
    let mut meta = MetaFile::new();
    meta.set("pid", 1);
    meta.write(&meta_path).unwrap();
    let mut names = KernelNameTable::new();
    names.insert(1, "old");
    names.write(&names_path).unwrap();
    write_user_annotations(&notes_path, &[(1, "old".to_owned())].into()).unwrap();
    let paths = [&meta_path, &names_path, &notes_path];
    let old: Vec<Vec<u8>> = paths.iter().map(|p| fs::read(p).unwrap()).collect();
    for (i, p) in paths.iter().enumerate() {
        fs::hard_link(p, dir.join(format!("link{i}"))).unwrap();
    }
    meta.set("pid", 2);
    meta.write(&meta_path).unwrap();
    names.insert(2, "new");
    names.write(&names_path).unwrap();
    write_user_annotations(&notes_path, &[(2, "new".to_owned())].into()).unwrap();
    for (i, p) in paths.iter().enumerate() {
        assert_eq!(
            fs::read(dir.join(format!("link{i}"))).unwrap(),
            old[i],
            "{p:?}"
        );
        assert_ne!(fs::read(p).unwrap(), old[i], "{p:?}");
    }
    let mut left: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "cupti_monitor_meta.bin",
            "kernel_names.tsv",
            "link0",
            "link1",
            "link2",
            "user_annotations.json"
        ]
    );
}
