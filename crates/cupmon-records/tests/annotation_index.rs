//! The annotation log's index (`user_annotations.jsonl.idx`): a dump opens without
//! reading the indexed part of the log, a lookup of a few ids reads only the blocks
//! that may hold them and finds what a whole read finds (ids out of order, repeated, in
//! the old `.json`), damage is reported as a whole read reports it, and an index that
//! does not describe its log is not trusted.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use super::common::fixture_dir;
use cupmon_records::dump::{
    annotation_line, read_dump_annotations, write_user_annotations, AnnotationLog, META_FILE,
    USER_ANNOTATIONS_INDEX_FILE, USER_ANNOTATIONS_LOG_FILE,
};
use cupmon_records::{Dump, DumpError, DumpWriter, MetaFile};

/// A dump in `dir` whose log names `ids` in that order ("<prefix> <id>").
fn dump_with(dir: &Path, ids: impl IntoIterator<Item = u64>, prefix: &str) {
    let meta = MetaFile::read(fixture_dir("cuda_workload").join(META_FILE)).unwrap();
    let mut w = DumpWriter::create(dir, &meta).unwrap();
    for id in ids {
        w.add_user_annotation(id, &format!("{prefix} {id}"))
            .unwrap();
    }
    w.finish().unwrap();
}

fn append(dir: &Path, ids: impl IntoIterator<Item = u64>, prefix: &str) {
    let mut log = AnnotationLog::open(dir).unwrap();
    for id in ids {
        log.append(id, &format!("{prefix} {id}")).unwrap();
    }
}

/// What a whole read of the dump gives for `ids`.
fn whole(dir: &Path, ids: &BTreeSet<u64>) -> BTreeMap<u64, String> {
    let (all, _) = read_dump_annotations(dir);
    all.into_iter().filter(|(id, _)| ids.contains(id)).collect()
}

fn named(dir: &Path, ids: &BTreeSet<u64>) -> Result<BTreeMap<u64, String>, DumpError> {
    Dump::open(dir).unwrap().user_annotations_named(ids)
}

fn index_lines(dir: &Path) -> usize {
    fs::read_to_string(dir.join(USER_ANNOTATIONS_INDEX_FILE))
        .unwrap()
        .lines()
        .count()
}

/// Overwrite the log's line for `id` with garbage of the same length.
fn spoil_line_of(dir: &Path, id: u64, prefix: &str) {
    let path = dir.join(USER_ANNOTATIONS_LOG_FILE);
    let mut log = fs::read(&path).unwrap();
    let line = annotation_line(id, &format!("{prefix} {id}"));
    let at = log
        .windows(line.len())
        .position(|w| w == &line[..])
        .unwrap();
    log[at..at + line.len() - 1].fill(b'x');
    fs::write(&path, log).unwrap();
}

#[test]
fn a_slice_reads_only_the_blocks_that_may_name_its_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // 10,000 annotations: 19 closed blocks of 512 lines, 272 lines after them.
    dump_with(dir, 1000..11_000, "step");
    assert_eq!(index_lines(dir), 19);
    // Ids at block edges, in the unindexed tail, and one the dump lacks.
    let ids: BTreeSet<u64> = [1000, 1511, 1512, 5000, 10_727, 10_728, 10_999, 99_999].into();
    let got = named(dir, &ids).unwrap();
    assert_eq!(got, whole(dir, &ids));
    assert_eq!(got.len(), 7);
    assert_eq!(got[&1512], "step 1512");

    // Damage in a block no lookup reads goes unseen: open and the lookup above did not
    // read it. The lookup that needs it, and a whole read, skip the bad line and count
    // it (a warning naming its line), the other names kept.
    spoil_line_of(dir, 8000, "step");
    let dump = Dump::open(dir).unwrap();
    assert!(dump.warnings().is_empty(), "{:?}", dump.warnings());
    assert_eq!(dump.user_annotations_named(&ids).unwrap(), got);
    assert!(dump.annotation_warnings().is_empty());
    let found = dump
        .user_annotations_named(&[7999, 8000, 8001].into())
        .unwrap();
    assert_eq!(found.keys().copied().collect::<Vec<_>>(), [7999, 8001]);
    let bad = "user_annotations.jsonl: 1 bad line skipped (the first, line 7001: not a {\"id\": \
               <external id>, \"name\": <string>} line";
    let [w] = &dump.annotation_warnings()[..] else {
        panic!("{:?}", dump.annotation_warnings())
    };
    assert!(w.to_string().starts_with(bad), "{w}");
    assert_eq!(dump.user_annotations().unwrap().len(), 9_999);
    let fresh = Dump::open(dir).unwrap();
    assert_eq!(fresh.user_annotations().unwrap().len(), 9_999);
    assert!(fresh.annotation_warnings()[0].to_string().starts_with(bad));
}

#[test]
fn a_later_line_wins_whatever_the_order_of_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Out of order (threads logging out of turn) and a second session in the same
    // directory starting again from the first id: the writer resumes the index.
    let first: Vec<u64> = (0..3000)
        .map(|i| if i % 7 == 3 { 5000 - i } else { i })
        .collect();
    dump_with(dir, first.iter().copied(), "first");
    append(dir, 0..1000, "second");
    append(dir, 2990..3100, "third");
    let lines = fs::read(dir.join(USER_ANNOTATIONS_LOG_FILE))
        .unwrap()
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    // The writer skipped the ids its session had written already.
    assert!((3500..4110).contains(&lines), "{lines}");
    assert_eq!(index_lines(dir), lines / 512);
    // The old `.json` lies under the log.
    write_user_annotations(
        dir.join("user_annotations.json"),
        &[(5, "old".to_owned()), (777_777, "only old".to_owned())].into(),
    )
    .unwrap();
    let ids: BTreeSet<u64> = [0, 5, 999, 1000, 2000, 2996, 2997, 3050, 4997, 777_777].into();
    let got = named(dir, &ids).unwrap();
    assert_eq!(got, whole(dir, &ids));
    assert_eq!(
        [
            &got[&5],
            &got[&1000],
            &got[&2997],
            &got[&4997],
            &got[&777_777]
        ],
        [
            "second 5",
            "first 1000",
            "third 2997",
            "first 4997",
            "only old"
        ]
    );
    let all: BTreeSet<u64> = (0..6000).chain([777_777]).collect();
    assert_eq!(named(dir, &all).unwrap(), whole(dir, &all));
    assert_eq!(
        Dump::open(dir).unwrap().user_annotations().unwrap(),
        &read_dump_annotations(dir).0
    );
}

#[test]
fn a_cut_last_line_is_the_warning_a_whole_read_gives() {
    for lines in [511, 512, 513, 2048, 2100] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        dump_with(dir, 0..lines, "step");
        let path = dir.join(USER_ANNOTATIONS_LOG_FILE);
        let mut log = fs::read(&path).unwrap();
        log.extend_from_slice(b"{\"id\":99,\"na");
        fs::write(&path, log).unwrap();
        let dump = Dump::open(dir).unwrap();
        let (all, warnings) = read_dump_annotations(dir);
        assert_eq!(dump.warnings(), &warnings[..], "{lines} lines");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0]
                .to_string()
                .contains(&format!("line {} (the last)", lines + 1)),
            "{}",
            warnings[0]
        );
        assert_eq!(dump.user_annotations().unwrap(), &all);
        let ids = [0, lines - 1, 99].into();
        assert_eq!(dump.user_annotations_named(&ids).unwrap(), whole(dir, &ids));
    }
}

#[test]
fn an_index_that_does_not_describe_its_log_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    dump_with(dir, 1000..3000, "step");
    let index = fs::read(dir.join(USER_ANNOTATIONS_INDEX_FILE)).unwrap();
    let ids: BTreeSet<u64> = [1003, 1700, 2500, 2999].into();
    // The log rewritten by other means: a line more at its start shifts every block.
    let path = dir.join(USER_ANNOTATIONS_LOG_FILE);
    let mut log = annotation_line(1500, "moved");
    log.extend(fs::read(&path).unwrap());
    fs::write(&path, &log).unwrap();
    assert_eq!(named(dir, &ids).unwrap(), whole(dir, &ids));
    // Another log of the same length in its place: the same byte ranges, other ids.
    let other = tempfile::tempdir().unwrap();
    dump_with(other.path(), 5000..7000, "step");
    fs::copy(other.path().join(USER_ANNOTATIONS_LOG_FILE), &path).unwrap();
    fs::write(dir.join(USER_ANNOTATIONS_INDEX_FILE), &index).unwrap();
    let ids: BTreeSet<u64> = [1003, 5003, 5700, 6999].into();
    let got = named(dir, &ids).unwrap();
    assert_eq!((got.len(), got), (3, whole(dir, &ids)));
    // A cut log (the index describes more than there is) and a garbled index.
    fs::write(&path, &log[..log.len() / 2]).unwrap();
    let ids: BTreeSet<u64> = [1003, 1700, 1500].into();
    let opened = Dump::open(dir).unwrap();
    assert_eq!(opened.user_annotations_named(&ids).unwrap().len(), 3);
    fs::write(dir.join(USER_ANNOTATIONS_INDEX_FILE), b"garbage\n").unwrap();
    assert_eq!(named(dir, &ids).unwrap().len(), 3);
}

#[test]
fn a_log_without_index_is_read_whole_and_indexed_when_appended_to() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    dump_with(dir, 0..1500, "old");
    // As an older cupmon left it: no index.
    fs::remove_file(dir.join(USER_ANNOTATIONS_INDEX_FILE)).unwrap();
    let ids: BTreeSet<u64> = [0, 1499, 1500].into();
    assert_eq!(named(dir, &ids).unwrap(), whole(dir, &ids));
    append(dir, 1500..1600, "new");
    assert_eq!(index_lines(dir), 3);
    let got = named(dir, &ids).unwrap();
    assert_eq!(got, whole(dir, &ids));
    assert_eq!(got[&1500], "new 1500");
}
