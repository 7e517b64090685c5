//! `verify-cost DUMP MODE`: one timed pass of what `cupmon stats` does with a dump's
//! stored digests, for `bench/slice/verify.sh` (issue 28: stats and report verify
//! every sealed frame of the segments they count from digests). MODE:
//!
//! - `summarize`: the whole-dump digest `cupmon stats` prints, verification included;
//! - `verify`: the verification alone, every frame of every closed segment checked
//!   against its seal ([`segment_frames_problem`]: XXH3-64 over the compressed bytes);
//! - `decode`: every record decoded (what verifying by reading the records would cost).
//!
//! Prints `MODE seconds segments bytes_checked records`.

use std::path::PathBuf;
use std::time::Instant;

use cupmon_records::digest::summarize;
use cupmon_records::dump::segment_frames_problem;
use cupmon_records::{walk_records, Dump, TimeRange};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: verify-cost DUMP summarize|verify|decode");
        std::process::exit(2);
    }
    let dir = PathBuf::from(&args[1]);
    let started = Instant::now();
    let dump = Dump::open(&dir).expect("open the dump");
    let list = dump.segments().expect("a segmented dump");
    let closed: Vec<_> = list.live.iter().filter(|f| f.summary.is_some()).collect();
    let bytes: u64 = closed
        .iter()
        .filter_map(|f| std::fs::metadata(&f.path).ok())
        .map(|m| m.len())
        .sum();
    let records = match args[2].as_str() {
        "summarize" => {
            let s = summarize(&dump, &TimeRange::default(), |_| {}).expect("summarize");
            assert!(
                s.report.warnings.is_empty(),
                "a sound dump: {:?}",
                s.report.warnings
            );
            assert_eq!(
                s.segments_digested as usize,
                closed.len(),
                "every digest used"
            );
            s.report.records
        }
        "verify" => {
            for f in &closed {
                if let Some(problem) = segment_frames_problem(&f.path, list.dump_id, f.segment) {
                    panic!("{}: {problem}", f.path.display());
                }
            }
            0
        }
        "decode" => {
            walk_records(&dump, |_| {}, |_, _, _| {})
                .expect("decode")
                .records
        }
        other => panic!("unknown mode {other}"),
    };
    println!(
        "{} {:.3} {} {bytes} {records}",
        args[2],
        started.elapsed().as_secs_f64(),
        closed.len()
    );
}
