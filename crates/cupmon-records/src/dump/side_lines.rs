//! Line-per-entry side files (`kernel_names.tsv`, `user_annotations.jsonl`,
//! `segments/index.jsonl`). Writers append a line as each entry first appears, so a
//! kill can cut the last line and a power loss can leave zeros after it: a damaged last
//! line (no newline at its end, or unreadable) is skipped with a warning, every line
//! before it kept. Bad lines before the last are no crash's doing (another writer, a
//! flipped byte), but the lines around them are sound: they are skipped too, counted,
//! and the first named, and the rest of the file is read.

use super::warning::DumpWarning;

/// Hand each non-empty line of `bytes` to `entry` (which says what is wrong with a line
/// it cannot read); `file` names the file in messages. Returns the warnings: bad lines
/// before the last (counted, the first named), then a damaged last line.
pub(super) fn parse_lines(
    bytes: &[u8],
    file: &str,
    entry: impl FnMut(&str) -> Result<(), String>,
) -> Vec<DumpWarning> {
    parse(bytes, file, true, entry)
}

/// [`parse_lines`] over whole lines from inside a file (the indexed blocks of the
/// annotation log): a bad last line is one more bad line, not a crash's cut.
pub(super) fn parse_inner_lines(
    bytes: &[u8],
    file: &str,
    entry: impl FnMut(&str) -> Result<(), String>,
) -> Vec<DumpWarning> {
    parse(bytes, file, false, entry)
}

fn parse(
    bytes: &[u8],
    file: &str,
    at_end: bool,
    mut entry: impl FnMut(&str) -> Result<(), String>,
) -> Vec<DumpWarning> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').map(trim_cr).collect();
    // `split` always yields a last piece: what follows the last newline.
    let tail = lines.pop().unwrap_or_default();
    let last = lines.iter().rposition(|l| !l.is_empty());
    let mut kept = 0;
    let mut bad: Option<(usize, usize, String)> = None;
    let mut last_damage = None;
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        match entry(&String::from_utf8_lossy(line)) {
            Ok(()) => kept += 1,
            Err(problem) if at_end && tail.is_empty() && Some(i) == last => {
                last_damage = Some((i + 1, problem));
            }
            Err(problem) => match &mut bad {
                Some((count, _, _)) => *count += 1,
                None => bad = Some((1, i + 1, problem)),
            },
        }
    }
    if !tail.is_empty() {
        last_damage = Some((lines.len() + 1, cut_line(tail)));
    }
    let mut warnings = Vec::new();
    if let Some((lines, first_line, first_problem)) = bad {
        warnings.push(DumpWarning::BadLines {
            file: file.to_owned(),
            lines,
            first_line,
            first_problem,
            kept,
        });
    }
    if let Some((line, problem)) = last_damage {
        warnings.push(damaged(file, line, problem, kept));
    }
    warnings
}

fn damaged(file: &str, line: usize, problem: String, kept: usize) -> DumpWarning {
    DumpWarning::DamagedLastLine {
        file: file.to_owned(),
        line,
        problem,
        kept,
    }
}

/// What a last line without its newline holds: the start of an entry the writer did
/// not finish, zeros (a power loss), or both.
fn cut_line(tail: &[u8]) -> String {
    let text_len = tail.iter().rposition(|&b| b != 0).map_or(0, |k| k + 1);
    let zeros = tail.len() - text_len;
    let zeros_text = format!("{zeros} zero bytes at the end, as a power loss leaves");
    if text_len == 0 {
        return zeros_text;
    }
    let text = String::from_utf8_lossy(&tail[..text_len]);
    let preview: String = text.chars().take(60).collect();
    let more = if preview.len() < text.len() {
        "..."
    } else {
        ""
    };
    let cut = format!("no newline at its end (the writer was cut off): {preview:?}{more}");
    if zeros == 0 {
        cut
    } else {
        format!("{cut}, then {zeros_text}")
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(bytes: &[u8]) -> (Vec<String>, Vec<String>) {
        let mut got = Vec::new();
        let warnings = parse_lines(bytes, "f.tsv", |l| {
            if l.starts_with("ok") {
                got.push(l.to_owned());
                Ok(())
            } else {
                Err(format!("bad {l:?}"))
            }
        });
        (got, warnings.iter().map(ToString::to_string).collect())
    }

    fn parse(bytes: &[u8]) -> Result<(Vec<String>, Option<String>), String> {
        let (got, mut warnings) = parse_all(bytes);
        assert!(warnings.len() <= 1, "{warnings:?}");
        Ok((got, warnings.pop()))
    }

    #[test]
    fn complete_lines_are_kept_and_need_no_warning() {
        assert_eq!(
            parse(b"ok1\n\nok2\r\n"),
            Ok((vec!["ok1".into(), "ok2".into()], None))
        );
        assert_eq!(parse(b""), Ok((vec![], None)));
    }

    #[test]
    fn a_damaged_last_line_is_a_warning() {
        let (got, w) = parse(b"ok1\nok2\nok3 but cut").unwrap();
        assert_eq!(got, ["ok1", "ok2"]);
        assert_eq!(
            w.unwrap(),
            "f.tsv: line 3 (the last): no newline at its end (the writer was cut off): \
             \"ok3 but cut\"; skipped it and kept the 2 entries before it"
        );
        let (got, w) = parse(b"ok1\nbad\n\n").unwrap();
        assert_eq!(got, ["ok1"]);
        assert_eq!(
            w.unwrap(),
            "f.tsv: line 2 (the last): bad \"bad\"; skipped it and kept the 1 entry before it"
        );
        let (_, w) = parse(b"ok1\n\0\0\0\0").unwrap();
        assert!(w
            .unwrap()
            .contains("line 2 (the last): 4 zero bytes at the end, as a power loss leaves"));
        let (_, w) = parse(b"ok1\nok\0\0").unwrap();
        assert!(w.unwrap().contains("\"ok\", then 2 zero bytes at the end"));
    }

    #[test]
    fn bad_lines_before_the_last_are_skipped_and_counted() {
        let (got, w) = parse_all(b"ok1\nbad\nok2\nworse\nok3\n");
        assert_eq!(got, ["ok1", "ok2", "ok3"]);
        assert_eq!(
            w,
            [
                "f.tsv: 2 bad lines skipped (the first, line 2: bad \"bad\"); kept the 3 \
              entries of the other lines"
            ]
        );
        // With a cut last line too: both said, the entries kept counted once.
        let (got, w) = parse_all(b"bad\nok2 cut");
        assert!(got.is_empty());
        assert_eq!(w.len(), 2);
        assert!(
            w[0].starts_with("f.tsv: 1 bad line skipped (the first, line 1:"),
            "{w:?}"
        );
        assert!(
            w[1].starts_with("f.tsv: line 2 (the last): no newline"),
            "{w:?}"
        );
    }
}
