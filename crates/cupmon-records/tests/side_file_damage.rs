//! Damaged side files and meta: the meta must be sound (errors naming file and byte); a
//! side file's damaged last line (what a kill while appending leaves) is skipped with a
//! warning and every complete line kept; damage before the last line is an error naming
//! file and line; a cut `user_annotations.json` (older cupmon rewrote it whole) is a
//! warning.

use std::fs;

use super::common::{decode_all, fixture_dir, meta_with};
use super::damage::{damaged, error_of};
use cupmon_records::dump::{
    annotation_line, KERNEL_NAMES_FILE, META_FILE, USER_ANNOTATIONS_FILE, USER_ANNOTATIONS_LOG_FILE,
};
use cupmon_records::{DecodeReport, Dump, DumpWarning, DumpWriter, KernelNameTable, MetaFile};

fn meta_error(meta: &[u8]) -> String {
    let dir = damaged(|_| {});
    fs::write(dir.path().join(META_FILE), meta).unwrap();
    error_of(dir.path())
}

#[test]
fn corrupt_meta_is_an_error_naming_the_file_and_byte() {
    let good = fs::read(fixture_dir("cuda_workload").join(META_FILE)).unwrap();
    let m = "cupti_monitor_meta.bin: ";
    assert_eq!(
        meta_error(b""),
        format!("{m}empty file (0 bytes), expected a 16-byte CUPMMETA header")
    );
    assert_eq!(
        meta_error(&good[..5]),
        format!("{m}5 bytes, too short for the 16-byte CUPMMETA header")
    );
    let mut bad = good.clone();
    bad[..4].copy_from_slice(b"\0\xffAB");
    assert_eq!(
        meta_error(&bad),
        format!("{m}byte 0: bad magic b\"\\x00\\xffABMETA\", expected b\"CUPMMETA\"")
    );
    let mut bad = good.clone();
    bad[8] = 1;
    assert_eq!(
        meta_error(&bad),
        format!("{m}byte 8: unsupported meta version 1, expected 2")
    );
    assert_eq!(
        meta_error(&good[..100]),
        format!("{m}byte 12: payload length 297, but 84 bytes follow the header")
    );
    let err = meta_error(&meta_with("{\"cupti_version\": 130001,"));
    assert!(
        err.starts_with(&format!("{m}byte 16: payload is not valid JSON: ")),
        "{err}"
    );
    assert_eq!(
        meta_error(&meta_with("[1,2]")),
        format!("{m}byte 16: payload is JSON but not an object: [1,2]")
    );
    assert_eq!(
        meta_error(&meta_with("{}")),
        format!("{m}no cupti_version key: cannot tell which CUPTI record layout the buffers use")
    );
    let err = meta_error(&meta_with("{\"cupti_version\": 25}"));
    assert!(
        err.starts_with(&format!(
            "{m}CUPTI API version 25 has no record layout in this cupmon: it decodes CUPTI \
             12.0-13.5 (cuptiGetVersion API versions 18-24, 26-28, 130000-130599)"
        )),
        "{err}"
    );
    let err = meta_error(&meta_with("{\"cupti_version\": 130600}"));
    assert!(
        err.starts_with(&format!(
            "{m}CUPTI 13.6 (API version 130600) has no record layout in this cupmon"
        )),
        "{err}"
    );
}

/// The warnings of decoding the dump in `dir` (which must decode).
fn warnings_of(dir: &std::path::Path) -> Vec<String> {
    let (_, report) = decode_all(dir).unwrap();
    report.warnings.iter().map(ToString::to_string).collect()
}

#[test]
fn bad_side_file_lines_before_the_last_are_skipped_and_counted() {
    // No crash leaves them, but the lines around them are sound: skipped, counted, the
    // first named, and the rest of the dump read (they once failed the whole dump).
    let dir = damaged(|_| {});
    let names = dir.path().join(KERNEL_NAMES_FILE);
    fs::write(&names, "123\tok\nnot a line\n456\tk\n0x12\tname\n789\tm\n").unwrap();
    assert_eq!(
        warnings_of(dir.path()),
        [
            "kernel_names.tsv: 2 bad lines skipped (the first, line 2: no TAB between pointer \
          and name in \"not a line\"); kept the 3 entries of the other lines"
        ]
    );
    let table = KernelNameTable::read(&names);
    assert_eq!((table.get(123), table.get(789)), (Some("ok"), Some("m")));
    fs::remove_file(&names).unwrap();
    // The old whole-file `.json` is one entry: a malformed one is not read, with a warning.
    fs::write(dir.path().join(USER_ANNOTATIONS_FILE), "{\"x\": \"y\"}").unwrap();
    assert_eq!(
        warnings_of(dir.path()),
        [
            "user_annotations.json: key \"x\" is not an external id (decimal u64): not read; \
          its annotations' names were not read (the log's, if any, were)"
        ]
    );
    fs::remove_file(dir.path().join(USER_ANNOTATIONS_FILE)).unwrap();
    let log = dir.path().join(USER_ANNOTATIONS_LOG_FILE);
    fs::write(
        &log,
        "{\"id\": 1, \"name\": \"a\"}\n[1]\n{\"id\": 2, \"name\": \"b\"}\n",
    )
    .unwrap();
    let warnings = warnings_of(dir.path());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(
            "user_annotations.jsonl: 1 bad line skipped (the first, line 2: not a {\"id\""
        ),
        "{warnings:?}"
    );
    assert!(warnings[0].ends_with("kept the 2 entries of the other lines"));
    let dump = Dump::open(dir.path()).unwrap();
    assert_eq!(dump.user_annotations().unwrap().len(), 2);
}

/// The decode of the cuda_workload dump with `tsv` as its kernel_names.tsv.
fn decode_with_names(tsv: &[u8]) -> DecodeReport {
    decode_all(damaged_with_names(tsv).path()).unwrap().1
}

#[test]
fn kernel_names_cut_by_a_kill_keep_every_complete_line() {
    let good = fs::read(fixture_dir("cuda_workload").join(KERNEL_NAMES_FILE)).unwrap();
    let lines = good.iter().filter(|&&b| b == b'\n').count();
    let mut cut = good.clone();
    cut.extend_from_slice(b"140737\t_ZN4demo5sc");
    let report = decode_with_names(&cut);
    let [DumpWarning::DamagedLastLine {
        file, line, kept, ..
    }] = &report.warnings[..]
    else {
        panic!("{:?}", report.warnings)
    };
    assert_eq!(
        (file.as_str(), *line, *kept),
        (KERNEL_NAMES_FILE, lines + 1, lines)
    );
    assert_eq!(
        report.warnings[0].to_string(),
        format!(
            "kernel_names.tsv: line {} (the last): no newline at its end (the writer was cut \
             off): \"140737\\t_ZN4demo5sc\"; skipped it and kept the {lines} entries before it",
            lines + 1
        )
    );
    // Every complete line still names its kernels.
    assert_eq!(report.unresolved_kernel_names, 0);
    let table = Dump::open(damaged_with_names(&cut).path()).unwrap();
    let full = KernelNameTable::read(fixture_dir("cuda_workload").join(KERNEL_NAMES_FILE));
    assert_eq!(table.kernel_names().sorted(), full.sorted());
}

fn damaged_with_names(tsv: &[u8]) -> tempfile::TempDir {
    let dir = damaged(|_| {});
    fs::write(dir.path().join(KERNEL_NAMES_FILE), tsv).unwrap();
    dir
}

#[test]
fn kernel_names_unreadable_last_line_is_skipped_with_a_warning() {
    let report = decode_with_names(b"1\tk1\n2\tk2\n\x01\x02garbage\n");
    assert_eq!(
        report
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "kernel_names.tsv: line 3 (the last): no TAB between pointer and name in \
          \"\\u{1}\\u{2}garbage\"; skipped it and kept the 2 entries before it"
        ]
    );
}

#[test]
fn kernel_names_zero_filled_tail_is_skipped_with_a_warning() {
    let mut tsv = fs::read(fixture_dir("cuda_workload").join(KERNEL_NAMES_FILE)).unwrap();
    tsv.resize(tsv.len() + 4096, 0);
    let report = decode_with_names(&tsv);
    let [w] = &report.warnings[..] else {
        panic!("{:?}", report.warnings)
    };
    assert!(
        w.to_string()
            .contains("(the last): 4096 zero bytes at the end, as a power loss leaves;"),
        "{w}"
    );
    assert_eq!(report.unresolved_kernel_names, 0);
}

#[test]
fn annotation_log_cut_by_a_kill_keeps_every_complete_line() {
    let dir = damaged(|_| {});
    fs::remove_file(dir.path().join(USER_ANNOTATIONS_FILE)).unwrap();
    let mut log = annotation_line(1, "step 1");
    log.extend(annotation_line(2, "step 2"));
    log.extend_from_slice(b"{\"id\":3,\"na");
    fs::write(dir.path().join(USER_ANNOTATIONS_LOG_FILE), log).unwrap();
    let dump = Dump::open(dir.path()).unwrap();
    assert_eq!(
        dump.user_annotations()
            .unwrap()
            .values()
            .collect::<Vec<_>>(),
        ["step 1", "step 2"]
    );
    let (_, report) = decode_all(dir.path()).unwrap();
    assert_eq!(
        report
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [
            "user_annotations.jsonl: line 3 (the last): no newline at its end (the writer was \
          cut off): \"{\\\"id\\\":3,\\\"na\"; skipped it and kept the 2 entries before it"
        ]
    );
}

#[test]
fn old_user_annotations_json_is_still_read_and_the_log_adds_to_it() {
    // cuda_workload has user_annotations.json (1001 "iteration 1", ...), as PyTorch-style
    // and older cupmon dumps do.
    let dir = damaged(|_| {});
    let old = Dump::open(dir.path())
        .unwrap()
        .user_annotations()
        .unwrap()
        .clone();
    assert_eq!(old[&1001], "iteration 1");
    let mut log = annotation_line(1001, "renamed");
    log.extend(annotation_line(5, "from the log"));
    fs::write(dir.path().join(USER_ANNOTATIONS_LOG_FILE), log).unwrap();
    let both = Dump::open(dir.path())
        .unwrap()
        .user_annotations()
        .unwrap()
        .clone();
    assert_eq!(both.len(), old.len() + 1);
    assert_eq!(
        (both[&1001].as_str(), both[&5].as_str()),
        ("renamed", "from the log")
    );
}

#[test]
fn user_annotations_json_cut_by_a_kill_is_a_warning_not_an_error() {
    let dir = damaged(|_| {});
    let path = dir.path().join(USER_ANNOTATIONS_FILE);
    let json = fs::read(&path).unwrap();
    for cut in [0, json.len() / 2] {
        fs::write(&path, &json[..cut]).unwrap();
        fs::write(
            dir.path().join(USER_ANNOTATIONS_LOG_FILE),
            annotation_line(9, "kept"),
        )
        .unwrap();
        let dump = Dump::open(dir.path()).unwrap();
        assert_eq!(
            dump.user_annotations()
                .unwrap()
                .values()
                .collect::<Vec<_>>(),
            ["kept"]
        );
        let [DumpWarning::CutSideFile { file, problem }] = dump.warnings() else {
            panic!("{:?}", dump.warnings())
        };
        assert_eq!(file, USER_ANNOTATIONS_FILE);
        assert!(
            problem.starts_with(&format!("{cut} bytes, not valid JSON: EOF while parsing")),
            "{problem}"
        );
    }
}

#[test]
fn dump_writer_appends_annotations_to_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let meta = MetaFile::read(fixture_dir("cuda_workload").join(META_FILE)).unwrap();
    let mut w = DumpWriter::create(tmp.path(), &meta).unwrap();
    w.add_user_annotation(7, "a").unwrap();
    w.add_user_annotation(7, "ignored: id already written")
        .unwrap();
    w.write_user_annotations(&[(7, "x".to_owned()), (8, "b".to_owned())].into())
        .unwrap();
    let mut want = annotation_line(7, "a");
    want.extend(annotation_line(8, "b"));
    assert_eq!(
        fs::read(tmp.path().join(USER_ANNOTATIONS_LOG_FILE)).unwrap(),
        want
    );
    assert!(!tmp.path().join(USER_ANNOTATIONS_FILE).exists());
}
