//! `cupmon report`: the page's kernel table and header agree with `cupmon stats` on a
//! fixture dump, a run directory reports every process, the hint's command decodes
//! the slowest period, and bad input is an error naming it, leaving no page behind.

use std::path::Path;

use crate::util::{assert_bad_input, assert_success, copy_dump, cupmon, fixture, names, stdout};

/// HTML text back to plain text (what the page escapes).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text of each cell of each body row of the table with `id`.
fn table(html: &str, id: &str) -> Vec<Vec<String>> {
    let start = html.find(&format!("<table id=\"{id}\">")).expect("table");
    let body = &html[start..start + html[start..].find("</table>").expect("end")];
    let body = &body[body.find("<tbody>").expect("tbody")..];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let inner = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
                    // Drop markup inside the cell (notes, bars).
                    let mut text = String::new();
                    let mut in_tag = false;
                    for c in inner.chars() {
                        match c {
                            '<' => in_tag = true,
                            '>' => in_tag = false,
                            c if !in_tag => text.push(c),
                            _ => {}
                        }
                    }
                    unescape(text.trim())
                })
                .collect()
        })
        .collect()
}

/// `stats`' top-kernel lines: (total ms, launches, avg us, name with its note).
fn stats_kernels(out: &str) -> Vec<[String; 4]> {
    out.lines()
        .skip_while(|l| !l.starts_with("top kernels by total GPU time"))
        .skip(2)
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            let mut cols = l.split_whitespace();
            let total = cols.next().unwrap().to_owned();
            let launches = cols.next().unwrap().to_owned();
            let avg = cols.next().unwrap().to_owned();
            let name = l.split_once(&format!(" {avg}  ")).unwrap().1.to_owned();
            [total, launches, avg, name]
        })
        .collect()
}

#[test]
fn the_kernel_table_and_header_have_the_numbers_of_stats() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["torch_mlp", "cuda_workload", "torch_transformer/dump"] {
        let dump = fixture(name);
        let d = dump.to_str().unwrap();
        let stats = cupmon(tmp.path(), &["stats", d, "--top", "20", "--full-names"]);
        assert_success(&stats);
        let stats = stdout(&stats);
        let page = tmp.path().join(format!("{}.html", name.replace('/', "-")));
        let out = cupmon(tmp.path(), &["report", d, "-o", page.to_str().unwrap()]);
        assert_success(&out);
        assert!(
            stdout(&out).contains("open it in a browser"),
            "{}",
            stdout(&out)
        );
        let html = std::fs::read_to_string(&page).unwrap();
        let expected = stats_kernels(&stats);
        let rows = table(&html, "kernels");
        assert!(!expected.is_empty());
        assert_eq!(rows.len(), expected.len(), "{name}");
        for (row, [total, launches, avg, kernel]) in rows.iter().zip(&expected) {
            // # | kernel (+ note) | launches | total ms | mean us | p50 | p99 | share
            assert_eq!(
                (&row[2], &row[3], &row[4]),
                (launches, total, avg),
                "{name}"
            );
            // The table shows a long name shortened (its tooltip holds it whole), as
            // `cupmon stats` without --full-names does.
            let (base, note) = match kernel.rfind(" (") {
                Some(i) if kernel.ends_with(" launches without times)") => kernel.split_at(i),
                _ => (kernel.as_str(), ""),
            };
            let shown = cupmon_demangle::short_name(base, cupmon_report::KERNEL_NAME_CHARS);
            assert_eq!(
                row[1],
                format!("{shown}{note}"),
                "{name}: the name and its note"
            );
        }
        let records = stats
            .lines()
            .find_map(|l| l.strip_prefix("records:"))
            .unwrap()
            .trim();
        assert!(
            html.contains(&format!("<dd id=\"records\">{records}</dd>")),
            "{name}"
        );
        // The recorder's fixtures have no dropped-records count: unknown, in red;
        // cupmon's own dump (torch_transformer) says 0.
        if name.starts_with("torch_transformer") {
            assert!(html.contains("<dd id=\"dropped\" class=\"ok\">0</dd>"));
            assert!(html.contains("NVIDIA H200"), "the GPU from the meta");
        } else {
            assert!(html.contains("<dd id=\"dropped\" class=\"bad\">unknown</dd>"));
        }
        // Self-contained: nothing to load.
        assert!(!html.contains(" src=") && !html.contains("<link"), "{name}");
    }
}

#[test]
fn a_run_directory_reports_every_process() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("prof");
    copy_dump(&run.join("466-20261129T190745Z"));
    copy_dump(&run.join("466-20261129T190745Z-1"));
    std::fs::create_dir_all(run.join("not-a-dump")).unwrap();
    // A window of the first process, linked from the page by a relative path.
    std::fs::write(
        run.join("466-20261129T190745Z/window-0.json"),
        r#"{"events":[{"kind":"kernel","start_ns":1795979272000000000,"end_ns":1795979272100000000}]}"#,
    )
    .unwrap();
    let out = cupmon(tmp.path(), &["report", "prof"]);
    assert_success(&out);
    assert!(
        stdout(&out).contains("report.html (2 processes"),
        "{}",
        stdout(&out)
    );
    let html = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
    let processes = table(&html, "rank-table");
    assert_eq!(processes.len(), 2);
    assert!(
        html.contains("href=\"prof/466-20261129T190745Z/window-0.json\""),
        "window link"
    );
    assert!(
        html.contains("\"name\":\"pid 466 window 0\""),
        "marked on the charts"
    );
    // Both processes' kernels together: each launch count doubles.
    let one = cupmon(
        tmp.path(),
        &["report", "prof/466-20261129T190745Z", "-o", "one.html"],
    );
    assert_success(&one);
    let single = std::fs::read_to_string(tmp.path().join("one.html")).unwrap();
    let (both, alone) = (table(&html, "kernels"), table(&single, "kernels"));
    assert_eq!(both.len(), alone.len());
    for (b, a) in both.iter().zip(&alone) {
        assert_eq!(
            b[2].parse::<u64>().unwrap(),
            2 * a[2].parse::<u64>().unwrap()
        );
        assert_eq!(b[7], a[7], "the same shares");
    }
}

#[test]
fn the_hint_command_decodes_the_slowest_period() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dump(&tmp.path().join("dump"));
    assert_success(&cupmon(tmp.path(), &["report", "dump", "-o", "r.html"]));
    let html = std::fs::read_to_string(tmp.path().join("r.html")).unwrap();
    let start = html.find("<code id=\"hint-command\">").unwrap() + 24;
    let command = unescape(&html[start..start + html[start..].find("</code>").unwrap()]);
    let args: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(&args[..3], &["cupmon", "decode", "dump"], "{command}");
    let out = cupmon(tmp.path(), &args[1..]);
    assert_success(&out);
    assert!(tmp.path().join("slice.trace.json.gz").is_file());
}

fn assert_nothing_written(dir: &Path, before: &[String]) {
    assert_eq!(names(dir), before, "no page, no temporary file left");
}

#[test]
fn bad_targets_and_arguments_are_errors_that_leave_no_page() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dump(&tmp.path().join("dump"));
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    std::fs::write(tmp.path().join("file"), b"x").unwrap();
    let before = names(tmp.path());
    let cases: &[(&[&str], &[&str])] = &[
        (&["report", "missing"], &["missing", "no such directory"]),
        (&["report", "file"], &["file", "not a directory"]),
        (
            &["report", "empty"],
            &["empty", "neither a dump directory nor"],
        ),
        (&["report", "dump", "--bin", "1us"], &["use a longer --bin"]),
        (
            &["report", "dump", "--from", "@1", "--to", "@2"],
            &["no records in the slice"],
        ),
        (
            &["report", "dump", "--from", "+5", "--to", "+1"],
            &["is not before --to"],
        ),
        (
            &["report", "dump", "-o", "nodir/r.html"],
            &["nodir/r.html", "does not exist"],
        ),
    ];
    for (args, mentions) in cases {
        let out = cupmon(tmp.path(), args);
        assert_bad_input(&out, mentions);
        assert_nothing_written(tmp.path(), &before);
    }
    let out = cupmon(tmp.path(), &["report", "dump", "-o", "dump/r.html"]);
    assert_bad_input(&out, &["inside the dump directory"]);
    assert!(!tmp.path().join("dump/r.html").exists());
}

/// The report of a torchrun-like run: each rank's dump named `rank<R>-<pid>-<start>`
/// (PyTorch-format dumps: no rank in their meta) and the launcher's dump, which
/// recorded nothing. The ranks showed as pids, and the hint's command pointed at the
/// launcher's empty dump.
#[test]
fn a_run_with_a_launcher_shows_ranks_and_hints_at_a_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("prof");
    copy_dump(&run.join("rank0-466-20261129T190745Z"));
    copy_dump(&run.join("rank1-466-20261129T190745Z-1"));
    let launcher = run.join("465-20261129T190744Z");
    std::fs::create_dir_all(&launcher).unwrap();
    std::fs::copy(
        fixture("torch_mlp/cupti_monitor_meta.bin"),
        launcher.join("cupti_monitor_meta.bin"),
    )
    .unwrap();
    // What the injection library leaves for a process that never touched CUDA.
    std::fs::create_dir_all(launcher.join("segments")).unwrap();
    let out = cupmon(tmp.path(), &["report", "prof", "-o", "r.html"]);
    assert_success(&out);
    let html = std::fs::read_to_string(tmp.path().join("r.html")).unwrap();
    let labels: Vec<String> = table(&html, "rank-table")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert!(labels.contains(&"rank 0".to_owned()), "{labels:?}");
    assert!(labels.contains(&"rank 1".to_owned()), "{labels:?}");
    let start = html.find("<code id=\"hint-command\">").unwrap() + 24;
    let command = unescape(&html[start..start + html[start..].find("</code>").unwrap()]);
    assert!(command.contains("prof/rank"), "{command}");
    assert!(!command.contains("465-"), "{command}");
}

/// A recording shorter than 1.5 s has bins under a millisecond: the page said
/// "Bins of 0ms".
#[test]
fn sub_millisecond_bins_are_named_in_microseconds() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = fixture("cuda_workload");
    let out = cupmon(
        tmp.path(),
        &["report", dump.to_str().unwrap(), "-o", "r.html"],
    );
    assert_success(&out);
    let html = std::fs::read_to_string(tmp.path().join("r.html")).unwrap();
    let at = html.find("Bins of ").expect("the bins' note") + 8;
    let bins = &html[at..at + html[at..].find(';').unwrap()];
    assert!(bins.ends_with("us") && bins != "0us", "{bins}");
}
