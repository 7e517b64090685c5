//! `--from` / `--to` times: `@<Unix seconds>` (`@1796111460`, `@1796111460.25`) or
//! an ISO-8601 UTC date and time (`2026-12-01T07:51:00Z`, `2026-12-01 07:51`,
//! `2026-12-01`; a trailing `Z` is optional, other offsets are refused). Parsed to
//! Unix ns. A stand-in, in one file, for the shared time syntax to come.

/// The Unix-ns time of `text`, or a message saying what is accepted.
pub fn parse_time(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix('@') {
        Some(secs) => unix_seconds(secs),
        None => iso_utc(t),
    };
    parsed.ok_or_else(|| {
        format!(
            "{text:?} is not a time: use @<Unix seconds> (e.g. @1796111460) or an ISO-8601 UTC \
             time (e.g. 2026-12-01T07:51:00Z, 2026-12-01 07:51, 2026-12-01)"
        )
    })
}

/// `1796111460` or `1796111460.123456789` seconds as ns.
fn unix_seconds(s: &str) -> Option<i64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let negative = whole.starts_with('-');
    let digits = whole.strip_prefix('-').unwrap_or(whole);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = digits.parse().ok()?;
    let frac_ns = fraction_ns(frac)?;
    let ns = secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)?;
    Some(if negative { -ns } else { ns })
}

/// Up to nine digits after the point, as ns (`"25"` -> 250_000_000).
fn fraction_ns(frac: &str) -> Option<i64> {
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if frac.is_empty() {
        return Some(0);
    }
    let padded = format!("{frac:0<9}");
    padded.parse().ok()
}

/// `YYYY-MM-DD[(T| )HH:MM[:SS[.frac]]][Z]`.
fn iso_utc(s: &str) -> Option<i64> {
    let s = s
        .strip_suffix('Z')
        .or_else(|| s.strip_suffix('z'))
        .unwrap_or(s);
    let (date, time) = match s.split_once(['T', 't', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut d = date.split('-');
    let (y, m, day) = (d.next()?, d.next()?, d.next()?);
    if d.next().is_some() || y.len() != 4 || m.len() != 2 || day.len() != 2 {
        return None;
    }
    let (y, m, day): (i64, u32, u32) = (y.parse().ok()?, m.parse().ok()?, day.parse().ok()?);
    if !(1..=12).contains(&m) || day == 0 || day > days_in_month(y, m) {
        return None;
    }
    let mut ns = days_from_civil(y, m, day).checked_mul(86_400_000_000_000)?;
    if let Some(time) = time {
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let mut parts = hms.split(':');
        let h: i64 = two_digits(parts.next()?)?;
        let min: i64 = two_digits(parts.next()?)?;
        let sec: i64 = match parts.next() {
            Some(p) => two_digits(p)?,
            None if frac.is_empty() => 0,
            None => return None,
        };
        if parts.next().is_some() || h > 23 || min > 59 || sec > 59 {
            return None;
        }
        ns += ((h * 60 + min) * 60 + sec) * 1_000_000_000 + fraction_ns(frac)?;
    }
    Some(ns)
}

fn two_digits(s: &str) -> Option<i64> {
    (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_and_iso_utc_give_the_same_ns() {
        let ns = 1_796_111_460_000_000_000;
        assert_eq!(parse_time("@1796111460"), Ok(ns));
        assert_eq!(parse_time("@1796111460.25"), Ok(ns + 250_000_000));
        assert_eq!(parse_time("2026-12-01T07:51:00Z"), Ok(ns));
        assert_eq!(parse_time("2026-12-01 07:51"), Ok(ns));
        assert_eq!(parse_time("2026-12-01T07:51:00.5"), Ok(ns + 500_000_000));
        assert_eq!(
            parse_time("2026-12-01"),
            Ok(ns - (7 * 60 + 51) * 60_000_000_000)
        );
        assert_eq!(parse_time("1970-01-01"), Ok(0));
        assert_eq!(
            parse_time("2000-02-29T23:59:59Z"),
            Ok(951_868_799_000_000_000)
        );
    }

    #[test]
    fn other_spellings_are_refused_with_the_syntax() {
        for bad in [
            "",
            "@",
            "@12x",
            "yesterday",
            "2026-13-01",
            "2026-02-30",
            "2026-12-01T25:00",
            "2026-12-01T07:51:00+02:00",
            "26-12-01",
            "@1.1234567891",
        ] {
            let err = parse_time(bad).expect_err(bad);
            assert!(err.contains("@<Unix seconds>"), "{err}");
        }
    }
}
