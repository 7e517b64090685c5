//! Line-per-entry side files (`kernel_names.tsv`, `user_annotations.jsonl`). Writers
//! append a line as each entry first appears, so a kill can cut the last line and a
//! power loss can leave zeros after it: a damaged last line (no newline at its end, or
//! unreadable) is skipped with a warning, every line before it kept. Damage before the
//! last line is no crash's doing: an error naming file and line.

use super::error::DumpError;
use super::warning::DumpWarning;

/// Hand each non-empty line of `bytes` to `entry` (which says what is wrong with a line
/// it cannot read); `file` names the file in messages. Returns the warning for a
/// damaged last line.
pub(super) fn parse_lines(
    bytes: &[u8],
    file: &str,
    mut entry: impl FnMut(&str) -> Result<(), String>,
) -> Result<Option<DumpWarning>, DumpError> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').map(trim_cr).collect();
    // `split` always yields a last piece: what follows the last newline.
    let tail = lines.pop().unwrap_or_default();
    let last = lines.iter().rposition(|l| !l.is_empty());
    let mut kept = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        match entry(&String::from_utf8_lossy(line)) {
            Ok(()) => kept += 1,
            Err(problem) if tail.is_empty() && Some(i) == last => {
                return Ok(Some(damaged(file, i + 1, problem, kept)));
            }
            Err(problem) => {
                return Err(DumpError::BadSideFile {
                    file: file.to_owned(),
                    line: i + 1,
                    problem,
                })
            }
        }
    }
    if tail.is_empty() {
        return Ok(None);
    }
    Ok(Some(damaged(file, lines.len() + 1, cut_line(tail), kept)))
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

    fn parse(bytes: &[u8]) -> Result<(Vec<String>, Option<String>), String> {
        let mut got = Vec::new();
        let warning = parse_lines(bytes, "f.tsv", |l| {
            if l.starts_with("ok") {
                got.push(l.to_owned());
                Ok(())
            } else {
                Err(format!("bad {l:?}"))
            }
        })
        .map_err(|e| e.to_string())?;
        Ok((got, warning.map(|w| w.to_string())))
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
    fn damage_before_the_last_line_is_an_error() {
        assert_eq!(
            parse(b"ok1\nbad\nok2\n"),
            Err("f.tsv: line 2: bad \"bad\"".into())
        );
        assert_eq!(
            parse(b"bad\nok2 cut"),
            Err("f.tsv: line 1: bad \"bad\"".into())
        );
    }
}
