//! `cupmon stats --timeline` on a dump with known busy periods (every number of the
//! table and both sparklines), and what `stats` and traces say of retired data.

use serde_json::Value;

use crate::slice::{copy, cupmon_tz, kernel, policy, write_dump, T0};
use crate::util::{assert_bad_input, assert_success, stdout};
use cupmon_records::{Dump, Record};

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// Device 0 busy 0.5 s in bin 0, 0.6 s in bin 2 (two overlapping kernels), 0.1 s in
/// bins 3 and 4 (one kernel across the edge); device 1 busy from 0.25 s to 1.25 s and
/// a kernel without end at 4.5 s; a 1 MB copy over 0.5-1.5 s, a 7-byte one at 3 s.
fn known_busy() -> Vec<Vec<Record>> {
    vec![
        vec![
            kernel(T0, T0 + S / 2, 0, 1, 0x1000),
            kernel(T0 + S / 4, T0 + 5 * S / 4, 1, 2, 0x1040),
            copy(T0 + S / 2, T0 + 3 * S / 2, 1_000_000, 3),
        ],
        vec![
            kernel(T0 + 2 * S, T0 + 2300 * MS, 0, 4, 0x1000),
            kernel(T0 + 2200 * MS, T0 + 2600 * MS, 0, 5, 0x1000),
            copy(T0 + 3 * S, T0 + 3 * S, 7, 6),
        ],
        vec![
            kernel(T0 + 3900 * MS, T0 + 4100 * MS, 0, 7, 0x1000),
            kernel(T0 + 4500 * MS, 0, 1, 8, 0x1000),
        ],
    ]
}

/// The numbers of the table's rows, by start time.
fn rows(text: &str) -> Vec<(String, Vec<f64>)> {
    text.lines()
        .filter(|l| l.starts_with("  14:32:"))
        .map(|l| {
            let mut cols = l.split_whitespace();
            let start = cols.next().unwrap().to_owned();
            (start, cols.map(|c| c.parse().unwrap()).collect())
        })
        .collect()
}

#[test]
fn a_timeline_of_known_busy_periods_prints_exact_bins_and_sparklines() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("dump");
    write_dump(&dump, &known_busy(), policy(4 << 10, 1 << 40));
    let d = dump.to_str().unwrap();
    let out = cupmon_tz(
        tmp.path(),
        "UTC",
        &[
            "stats",
            d,
            "--timeline",
            "1s",
            "--from",
            "@1796135520",
            "--to",
            "+5",
        ],
    );
    assert_success(&out);
    let text = stdout(&out);
    assert!(
        text.contains("timeline:        5 bins of 1s from 14:32:00.000 - 14:32:05.000 local"),
        "{text}"
    );
    assert!(text.contains("mean over 2 devices"), "{text}");
    // start, busy % (mean), dev0 %, dev1 %, kernels/s, copy MiB/s (1e6 B/s = 0.95 MiB/s).
    let want: Vec<(&str, [f64; 5])> = vec![
        ("14:32:00.000", [62.5, 50.0, 75.0, 2.0, 0.5]),
        ("14:32:01.000", [12.5, 0.0, 25.0, 0.0, 0.5]),
        ("14:32:02.000", [30.0, 60.0, 0.0, 2.0, 0.0]),
        ("14:32:03.000", [5.0, 10.0, 0.0, 1.0, 0.0]),
        ("14:32:04.000", [5.0, 10.0, 0.0, 1.0, 0.0]),
    ];
    let got = rows(&text);
    assert_eq!(got.len(), want.len(), "{text}");
    for ((start, nums), (want_start, want_nums)) in got.iter().zip(&want) {
        assert_eq!(start, want_start);
        assert_eq!(nums.as_slice(), want_nums.as_slice(), "{start}: {text}");
    }
    assert!(text.contains("  busy %     ▅▂▃▁▁  (0-100 %)"), "{text}");
    assert!(text.contains("  kernels/s  █▁█▅▅  (0-2.0 /s)"), "{text}");
    assert!(text.contains("dropped records: 0 in all (the dump counts them in total, not per bin)"));

    // Without a value: about 60 bins of a round length over the whole dump.
    let out = cupmon_tz(tmp.path(), "UTC", &["stats", d, "--timeline"]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(
        text.contains("timeline:        46 bins of 100ms from 14:32:00.000 - 14:32:04.500 local"),
        "{text}"
    );
    assert_eq!(rows(&text).len(), 46);

    let out = cupmon_tz(tmp.path(), "UTC", &["stats", d, "--timeline", "1us"]);
    assert_bad_input(&out, &["--timeline", "use a longer bin"]);
}

#[test]
fn stats_and_traces_say_what_was_retired() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("dump");
    // 200 buffers of 100 kernels, 1 ms apart, in a 64 KiB budget: the oldest go.
    let buffers: Vec<Vec<Record>> = (0..200u64)
        .map(|b| {
            (b * 100..(b + 1) * 100)
                .map(|i| {
                    let t = T0 + i * MS;
                    kernel(
                        t,
                        t + 300_000 + (i * 7919 % 97) * 1000,
                        0,
                        i as u32 + 1,
                        0x1000,
                    )
                })
                .collect()
        })
        .collect();
    write_dump(&dump, &buffers, policy(4 << 10, 64 << 10));
    let retired = Dump::open(&dump).unwrap().retired();
    assert!(retired.segments > 0, "nothing retired: {retired:?}");
    let d = dump.to_str().unwrap();
    let out = cupmon_tz(tmp.path(), "UTC", &["stats", d]);
    assert_success(&out);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("retired: "))
        .unwrap_or_default();
    assert!(
        line.starts_with(&format!("retired: {} segments, ", retired.segments)),
        "{text}"
    );
    assert!(line.contains("14:32:00.000 - "), "{line}");
    assert!(
        line.contains(&format!("({} records, ", retired.records)),
        "{line}"
    );

    let out = cupmon_tz(
        tmp.path(),
        "UTC",
        &["decode", d, "--last", "1s", "-o", "w.json"],
    );
    assert_success(&out);
    let w: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("w.json")).unwrap()).unwrap();
    assert_eq!(
        w["cupmon"]["retired"]["segments"].as_u64(),
        Some(retired.segments)
    );
    assert_eq!(
        w["cupmon"]["retired"]["first_ns"].as_u64(),
        retired.first_ns
    );
    // Exported again, the window keeps what it says.
    let out = cupmon_tz(
        tmp.path(),
        "UTC",
        &["export", "--window", "w.json", "-o", "t.json"],
    );
    assert_success(&out);
    let t: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("t.json")).unwrap()).unwrap();
    assert_eq!(t["cupmon"]["retired"], w["cupmon"]["retired"]);
    assert_eq!(t["cupmon"]["slice"], w["cupmon"]["slice"]);
}
