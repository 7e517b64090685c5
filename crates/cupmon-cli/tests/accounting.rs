//! Every kernel accounted for, as the user sees it: `stats`, `report`, the trace's
//! top-level `cupmon` block and `cupmon run`'s summary show launched, recorded, dropped
//! and unaccounted kernels, loudly when any are unaccounted; a dump written without
//! the launch counter says the launches were not counted (never 0).

use std::path::Path;

use cupmon_records::dump::{DeliveryGap, LaunchLedger, LossRange, Recovery, META_FILE};
use cupmon_records::MetaFile;

use super::util::*;

/// The torch_mlp dump with a launch ledger: 70 kernels more launched than recorded.
fn dump_with_loss(dir: &Path) {
    copy_dump(dir);
    let path = dir.join(META_FILE);
    let mut meta = MetaFile::read(&path).expect("meta");
    let recorded = 102; // any number: the ledger is what is read
    LaunchLedger {
        counted: true,
        kernels_launched: recorded + 70,
        kernels_recorded: recorded,
        gaps: vec![DeliveryGap {
            from_unix_ns: 1_795_979_272_000_000_000,
            to_unix_ns: Some(1_795_979_273_000_000_000),
            kernels_launched: 90,
            recovered_by: Some("forced_flush".into()),
        }],
        recoveries: vec![Recovery {
            at_unix_ns: 1_795_979_272_500_000_000,
            action: "forced_flush".into(),
            worked: true,
        }],
        losses: vec![LossRange {
            from_unix_ns: 1_795_979_272_000_000_000,
            to_unix_ns: 1_795_979_272_250_000_000,
            kernels: 70,
        }],
        ..LaunchLedger::default()
    }
    .write_to(&mut meta);
    meta.set("dropped_records", 0).set("session_open", false);
    meta.write(&path).expect("write meta");
}

#[test]
fn unaccounted_kernels_are_a_loud_warning_in_stats() {
    let dir = tempfile::tempdir().unwrap();
    dump_with_loss(&dir.path().join("dump"));
    let out = cupmon(dir.path(), &["stats", "dump"]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(
        text.contains("172 launched, 102 recorded (kept + retired), 0 records counted as dropped, 70 unaccounted"),
        "{text}"
    );
    assert!(
        text.contains("WARNING: 70 kernels launched were neither recorded nor counted"),
        "{text}"
    );
    assert!(
        text.contains("90 kernels launched meanwhile, recovered by forced_flush"),
        "{text}"
    );
    assert!(
        text.contains("unaccounted: 70 kernels launched between "),
        "when, to the flush period: {text}"
    );
    assert!(
        stderr(&out).contains("WARNING: 70 kernels"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_old_dump_without_the_launch_counter_reads_as_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    copy_dump(&dir.path().join("dump"));
    let out = cupmon(dir.path(), &["stats", "dump"]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("kernels: launches not counted"), "{text}");
    assert!(!text.contains("unaccounted"), "never a number: {text}");
}

#[test]
fn the_traces_cupmon_block_carries_the_kernel_account() {
    let dir = tempfile::tempdir().unwrap();
    dump_with_loss(&dir.path().join("dump"));
    copy_dump(&dir.path().join("old"));
    for (dump, trace) in [("dump", "t.json"), ("old", "old.json")] {
        let out = cupmon(
            dir.path(),
            &["decode", dump, "--format", "chrome", "-o", trace],
        );
        assert_success(&out);
    }
    let block = &read_json(&dir.path().join("t.json"))["cupmon"]["kernels"];
    assert_eq!(block["status"], "counted", "{block}");
    assert_eq!(block["launched"], 172);
    assert_eq!(block["unaccounted"], 70);
    assert_eq!(block["gaps"][0]["recovered_by"], "forced_flush");
    let old = &read_json(&dir.path().join("old.json"))["cupmon"]["kernels"];
    assert_eq!(old["status"], "not_counted", "{old}");
}

#[test]
fn the_report_banner_warns_of_unaccounted_kernels() {
    let dir = tempfile::tempdir().unwrap();
    dump_with_loss(&dir.path().join("dump"));
    let out = cupmon(dir.path(), &["report", "dump", "-o", "r.html"]);
    assert_success(&out);
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("id=\"unaccounted-warning\""), "no banner");
    assert!(html.contains("<dd id=\"unaccounted\" class=\"bad\">70</dd>"));
    assert!(html.contains("172 launched, 70 unaccounted"));
}
