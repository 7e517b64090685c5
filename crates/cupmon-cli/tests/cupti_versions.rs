//! `cupmon run` under CUPTI versions other than 13.0 (the fake reports the version
//! `CUPMON_FAKE_CUPTI_VERSION` names and writes records in its layout): a version
//! cupmon has layouts for is recorded and read back; one it has none for is refused
//! with the version, the library and the supported range, the program running on
//! unmonitored; a dump whose meta names an unknown version is refused by the readers.

use std::process::Command;

use cupmon_records::dump::META_FILE;
use cupmon_records::MetaFile;
use cupmon_test_support::FAKE_VERSION_ENV;

use super::run_fake::{command, kernels, only_dump};

const SUPPORTED: &str = "it decodes CUPTI 12.0-13.5 \
     (cuptiGetVersion API versions 18-24, 26-28, 130000-130599)";

#[test]
fn cupti_12_4_records_are_recorded_and_read_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = command(dir.path(), &[], &[], &["launch", "7"])
        .env(FAKE_VERSION_ENV, "22")
        .output()
        .expect("run cupmon");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("7 kernels"), "{stderr}");
    let dump = only_dump(dir.path());
    assert_eq!(kernels(&dump), 7);
    let stats = Command::new(env!("CARGO_BIN_EXE_cupmon"))
        .arg("stats")
        .arg(&dump)
        .output()
        .expect("cupmon stats");
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(text.contains("CUPTI:           12.4"), "{text}");
}

#[test]
fn cupti_13_6_is_refused_and_the_program_runs_unmonitored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = command(dir.path(), &[], &[], &["launch", "5"])
        .env(FAKE_VERSION_ENV, "130600")
        .output()
        .expect("run cupmon");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the program's own code: {stderr}"
    );
    let library = cupmon_test_support::fake_library_path()
        .display()
        .to_string();
    for part in [
        "was not monitored",
        &format!("{library}: CUPTI 13.6 (API version 130600) has no record layout"),
        SUPPORTED,
        "set CUPMON_LIBCUPTI=/path/to/libcupti.so (or --libcupti)",
    ] {
        assert!(stderr.contains(part), "{part:?} not in:\n{stderr}");
    }
    assert!(!stderr.contains("5 kernels"), "{stderr}");
}

#[test]
fn a_dump_of_an_unknown_cupti_is_refused_by_every_reader() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = command(dir.path(), &[], &[], &["launch", "3"])
        .output()
        .expect("run cupmon");
    assert_eq!(out.status.code(), Some(0));
    let dump = only_dump(dir.path());
    let meta_path = dump.join(META_FILE);
    let mut meta = MetaFile::read(&meta_path).expect("meta");
    meta.set("cupti_version", 140_000);
    meta.write(&meta_path).expect("write meta");
    let out_dir = tempfile::tempdir().expect("tempdir");
    let trace = out_dir.path().join("t.json");
    let parquet = out_dir.path().join("p.parquet");
    let html = out_dir.path().join("r.html");
    let readers: [Vec<&std::ffi::OsStr>; 4] = [
        vec!["stats".as_ref(), dump.as_os_str()],
        vec![
            "decode".as_ref(),
            dump.as_os_str(),
            "-o".as_ref(),
            trace.as_os_str(),
        ],
        vec![
            "export-parquet".as_ref(),
            dump.as_os_str(),
            "-o".as_ref(),
            parquet.as_os_str(),
        ],
        vec![
            "report".as_ref(),
            dump.as_os_str(),
            "-o".as_ref(),
            html.as_os_str(),
        ],
    ];
    for args in readers {
        let out = Command::new(env!("CARGO_BIN_EXE_cupmon"))
            .args(&args)
            .output()
            .expect("cupmon");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {stderr}");
        for part in [
            &format!("{META_FILE}: CUPTI 14.0 (API version 140000) has no record layout"),
            SUPPORTED,
        ] {
            assert!(
                stderr.contains(part),
                "{args:?}: {part:?} not in:\n{stderr}"
            );
        }
    }
    for file in [&trace, &html] {
        assert!(!file.exists(), "{} left behind", file.display());
    }
}
