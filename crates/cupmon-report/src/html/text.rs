//! Text for the page: HTML escaping, numbers as `cupmon stats` prints them, instants
//! as ISO-8601 UTC (the page's script shows them in the viewer's local time), and
//! links to files relative to the page.

use std::fmt::Write as _;
use std::path::{Component, Path};

/// `s` for HTML text and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `2026-12-01T14:32:00Z` (whole seconds) or `...00.250Z` (with milliseconds).
pub fn iso_utc(unix_ns: u64, millis: bool) -> String {
    let t = cupmon_config::time_spec::CivilTime::from_unix_utc(i128::from(unix_ns));
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    if millis {
        let _ = write!(s, ".{:03}", t.nanos / 1_000_000);
    }
    s.push('Z');
    s
}

/// An instant the script rewrites in local time; UTC without the script.
pub fn time(unix_ns: u64) -> String {
    format!(
        "<time data-ms=\"{}\">{}</time>",
        unix_ns / 1_000_000,
        iso_utc(unix_ns, true)
    )
}

/// ms with 3 decimals, as `cupmon stats` prints kernel totals.
pub fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// µs with 2 decimals, as `cupmon stats` prints mean kernel times; `-` for none.
pub fn us(ns: Option<f64>) -> String {
    ns.map_or_else(|| "-".to_owned(), |ns| format!("{:.2}", ns / 1e3))
}

/// `42.1%`; `-` for none.
pub fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_owned(), |s| format!("{:.1}%", s * 100.0))
}

/// `1.5 GB`, `312.0 MB`, `800 B` (powers of 1000, as bandwidths are given).
pub fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", UNITS[0])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `12.500 s`, `3 h 02 min`.
pub fn duration(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 3600.0 {
        format!("{s:.3} s")
    } else {
        let m = ns / 60_000_000_000;
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

/// A link from a page in `page_dir` (absolute) to `target` (a relative one is taken
/// from the current directory): relative, each segment percent-encoded.
pub fn href(page_dir: &Path, target: &Path) -> String {
    let target = std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf());
    let from: Vec<Component> = page_dir.components().collect();
    let to: Vec<Component> = target.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = Vec::new();
    if common == 0 {
        return format!("file://{}", encode(&target.to_string_lossy()));
    }
    parts.extend(std::iter::repeat_n("..".to_owned(), from.len() - common));
    parts.extend(
        to[common..]
            .iter()
            .map(|c| encode(&c.as_os_str().to_string_lossy())),
    );
    parts.join("/")
}

/// Percent-encode all but unreserved characters and `/`.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A path for a shell command line: quoted when it needs to be.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._/+:@,=".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(
            iso_utc(1_796_133_600_250_000_000, false),
            "2026-12-01T14:00:00Z"
        );
        assert_eq!(
            iso_utc(1_796_133_600_250_000_000, true),
            "2026-12-01T14:00:00.250Z"
        );
        assert_eq!(ms(1_234_567), "1.235");
        assert_eq!(us(Some(1500.0)), "1.50");
        assert_eq!(us(None), "-");
        assert_eq!(bytes(1.5e9), "1.5 GB");
        assert_eq!(bytes(800.0), "800 B");
        assert_eq!(duration(7_380_000_000_000), "2 h 03 min");
        assert_eq!(
            href(
                Path::new("/runs/out"),
                Path::new("/runs/prof/rank 0/w.json")
            ),
            "../prof/rank%200/w.json"
        );
        assert_eq!(href(Path::new("/a"), Path::new("/a/b")), "b");
        assert_eq!(shell_word("prof/rank0-1-2"), "prof/rank0-1-2");
        assert_eq!(shell_word("my dir/it's"), r"'my dir/it'\''s'");
    }
}
