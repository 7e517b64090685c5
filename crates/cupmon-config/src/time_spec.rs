//! The instants a user names on the command line (`--from T`, `--to T`): `+12.5`
//! (seconds after the dump's first record; `+90s`, `+2m` in cupmon's duration syntax),
//! `@1764567890.25` (Unix seconds), ISO-8601 (`2026-12-01T14:32:00Z`, with an offset
//! `+01:00`, or without zone: local time) and `HH:MM:SS[.fff]` (local time on the day of
//! the dump's first record).
//!
//! Here because this crate owns the syntax of every value a user types (sizes and
//! durations in `units`), and a time spec is one more such value; it is pure text to
//! numbers. Local time needs the time zone database, which this crate does not carry:
//! the caller resolves through a [`LocalZone`] (the CLI's, over the TZ the process sees).

use std::fmt;

use crate::units::parse_duration;

/// The accepted forms, for error messages.
pub const TIME_SPEC_FORMS: &str = "+SECONDS after the dump's first record (+12.5, +90s, +2m), \
@UNIX_SECONDS (@1764567890.25), an ISO-8601 time (2026-12-01T14:32:00Z, \
2026-12-01T14:32:00+01:00, or 2026-12-01T14:32:00 in local time) or HH:MM:SS[.fff] (local \
time on the day of the dump's first record)";

/// A date and time of day on a wall clock (no zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CivilTime {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub nanos: u32,
}

impl CivilTime {
    /// The civil time of `unix_ns` on the UTC clock.
    pub fn from_unix_utc(unix_ns: i128) -> Self {
        let secs = unix_ns.div_euclid(1_000_000_000);
        let nanos = unix_ns.rem_euclid(1_000_000_000) as u32;
        let days = secs.div_euclid(86_400) as i64;
        let rest = secs.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: rest / 3600,
            minute: rest / 60 % 60,
            second: rest % 60,
            nanos,
        }
    }

    /// Unix ns of this civil time read on the UTC clock.
    pub fn unix_ns_utc(&self) -> i128 {
        let days = days_from_civil(self.year, self.month, self.day);
        let secs = i128::from(days) * 86_400
            + i128::from(self.hour * 3600 + self.minute * 60 + self.second);
        secs * 1_000_000_000 + i128::from(self.nanos)
    }
}

/// What a spec names, before the dump and the zone are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeForm {
    /// ns after the dump's first record.
    AfterFirst(u64),
    /// Unix ns (also an ISO time with a zone).
    Unix(i128),
    /// An ISO time without zone: local.
    Local(CivilTime),
    /// ns after local midnight, on the day of the dump's first record.
    TimeOfDay(u64),
}

/// A parsed `--from`/`--to` value, with the text it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeSpec {
    pub text: String,
    pub form: TimeForm,
}

impl fmt::Display for TimeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Local time: the conversions a spec needs from the time zone.
pub trait LocalZone {
    /// Unix ns of the local civil time `t`; an error when the clock skipped it (a
    /// change to summer time). A time the clock showed twice is its first showing.
    fn unix_ns(&self, t: &CivilTime) -> Result<i128, String>;
    /// The local civil time at `unix_ns`.
    fn civil(&self, unix_ns: i128) -> CivilTime;
}

/// UTC as a [`LocalZone`] (tests, and a process with `TZ=UTC`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Utc;

impl LocalZone for Utc {
    fn unix_ns(&self, t: &CivilTime) -> Result<i128, String> {
        Ok(t.unix_ns_utc())
    }
    fn civil(&self, unix_ns: i128) -> CivilTime {
        CivilTime::from_unix_utc(unix_ns)
    }
}

impl TimeSpec {
    /// Parse `text`; the error says what is accepted.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let form = parse_form(t).map_err(|why| {
            let why = why.map_or_else(String::new, |w| format!(" ({w})"));
            format!("{text:?} is not a time{why}; use {TIME_SPEC_FORMS}")
        })?;
        Ok(Self {
            text: t.to_owned(),
            form,
        })
    }

    /// Whether resolving needs the time of the dump's first record.
    pub fn needs_first_record(&self) -> bool {
        matches!(self.form, TimeForm::AfterFirst(_) | TimeForm::TimeOfDay(_))
    }

    /// Unix ns of the instant; `first_ns`: the dump's first record (needed by
    /// [`TimeSpec::needs_first_record`] forms).
    pub fn resolve(&self, first_ns: Option<u64>, zone: &dyn LocalZone) -> Result<u64, String> {
        let first = || {
            first_ns.ok_or_else(|| {
                "the dump has no timed records to count from (use @UNIX_SECONDS or an ISO-8601 \
                 time with a zone)"
                    .to_owned()
            })
        };
        let ns = match self.form {
            TimeForm::AfterFirst(d) => i128::from(first()?) + i128::from(d),
            TimeForm::Unix(ns) => ns,
            TimeForm::Local(t) => zone.unix_ns(&t)?,
            TimeForm::TimeOfDay(d) => {
                let day = zone.civil(i128::from(first()?));
                let midnight = CivilTime {
                    hour: 0,
                    minute: 0,
                    second: 0,
                    nanos: 0,
                    ..day
                };
                let secs = (d / 1_000_000_000) as u32;
                let t = CivilTime {
                    hour: secs / 3600,
                    minute: secs / 60 % 60,
                    second: secs % 60,
                    nanos: (d % 1_000_000_000) as u32,
                    ..midnight
                };
                zone.unix_ns(&t)?
            }
        };
        u64::try_from(ns).map_err(|_| "before 1970 or after 2554: out of range".to_owned())
    }
}

/// `None`: no particular reason to give beyond "not a time".
fn parse_form(t: &str) -> Result<TimeForm, Option<String>> {
    if let Some(rest) = t.strip_prefix('+') {
        let d = parse_duration(rest).map_err(Some)?;
        return Ok(TimeForm::AfterFirst(d.as_nanos() as u64));
    }
    if let Some(rest) = t.strip_prefix('@') {
        return parse_decimal_ns(rest).map(TimeForm::Unix).ok_or(None);
    }
    if t.len() >= 10 && t.as_bytes()[4] == b'-' {
        return parse_iso(t);
    }
    let (secs, nanos) = parse_clock(t).ok_or(None)?;
    Ok(TimeForm::TimeOfDay(
        u64::from(secs) * 1_000_000_000 + u64::from(nanos),
    ))
}

/// `1764567890.25` -> ns, exactly (no float rounding); at most 9 decimals.
fn parse_decimal_ns(s: &str) -> Option<i128> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || int.len() > 11 || !digits(int) || !digits(frac) || frac.len() > 9 {
        return None;
    }
    let mut ns: i128 = int.parse::<i128>().ok()? * 1_000_000_000;
    if !frac.is_empty() {
        let scale = 10i128.pow(9 - frac.len() as u32);
        ns += frac.parse::<i128>().ok()? * scale;
    }
    Some(ns)
}

/// `HH:MM[:SS[.fff]]` -> (seconds after midnight, ns).
fn parse_clock(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.splitn(3, ':');
    let hour = two_digits(parts.next()?)?;
    let minute = two_digits(parts.next()?)?;
    let (second, nanos) = match parts.next() {
        None => (0, 0),
        Some(sec) => {
            let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
            let nanos = if sec.contains('.') {
                if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                frac.parse::<u32>().ok()? * 10u32.pow(9 - frac.len() as u32)
            } else {
                0
            };
            (two_digits(whole)?, nanos)
        }
    };
    (hour < 24 && minute < 60 && second < 60).then_some((hour * 3600 + minute * 60 + second, nanos))
}

fn two_digits(s: &str) -> Option<u32> {
    (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `YYYY-MM-DD[(T| )HH:MM[:SS[.f]]][Z|±HH:MM|±HHMM|±HH]`.
fn parse_iso(t: &str) -> Result<TimeForm, Option<String>> {
    let (date, rest) = t.split_at(10);
    let b = date.as_bytes();
    if b[7] != b'-' || !date[..4].bytes().all(|c| c.is_ascii_digit()) {
        return Err(None);
    }
    let year: i32 = date[..4].parse().map_err(|_| None)?;
    let month = two_digits(&date[5..7]).ok_or(None)?;
    let day = two_digits(&date[8..10]).ok_or(None)?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(Some(format!("{date} is not a date")));
    }
    let mut civil = CivilTime {
        year,
        month,
        day,
        hour: 0,
        minute: 0,
        second: 0,
        nanos: 0,
    };
    let rest = match rest.chars().next() {
        None => return Ok(TimeForm::Local(civil)),
        Some('T' | 't' | ' ') => &rest[1..],
        Some(_) => return Err(None),
    };
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(zone_at);
    let (secs, nanos) = parse_clock(clock).ok_or(None)?;
    civil.hour = secs / 3600;
    civil.minute = secs / 60 % 60;
    civil.second = secs % 60;
    civil.nanos = nanos;
    let offset_secs: i128 = match zone {
        "" => return Ok(TimeForm::Local(civil)),
        "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let hm = zone[1..].replace(':', "");
            let (h, m) = match hm.len() {
                2 => (two_digits(&hm).ok_or(None)?, 0),
                4 => (
                    two_digits(&hm[..2]).ok_or(None)?,
                    two_digits(&hm[2..]).ok_or(None)?,
                ),
                _ => return Err(Some(format!("bad zone offset {zone:?}"))),
            };
            if h > 23 || m > 59 {
                return Err(Some(format!("bad zone offset {zone:?}")));
            }
            sign * i128::from(h * 3600 + m * 60)
        }
    };
    Ok(TimeForm::Unix(
        civil.unix_ns_utc() - offset_secs * 1_000_000_000,
    ))
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`]: (year, month, day) of a count of days since
/// 1970-01-01.
pub fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as i32, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i128 = 1_000_000_000;

    fn form(t: &str) -> TimeForm {
        TimeSpec::parse(t).unwrap().form
    }

    #[test]
    fn every_form_parses_to_its_instant() {
        assert_eq!(form("+12.5"), TimeForm::AfterFirst(12_500_000_000));
        assert_eq!(form("+90s"), TimeForm::AfterFirst(90_000_000_000));
        assert_eq!(form("+2m"), TimeForm::AfterFirst(120_000_000_000));
        assert_eq!(form("+250ms"), TimeForm::AfterFirst(250_000_000));
        assert_eq!(
            form("@1764567890.25"),
            TimeForm::Unix(1_764_567_890_250_000_000)
        );
        assert_eq!(form("@1764567890"), TimeForm::Unix(1_764_567_890 * S));
        assert_eq!(
            form("@1764567890.000000001"),
            TimeForm::Unix(1_764_567_890 * S + 1)
        );
        // 2026-12-01T14:32:00Z is 1796135520 (days_from_civil checked against `date -u`).
        assert_eq!(
            form("2026-12-01T14:32:00Z"),
            TimeForm::Unix(1_796_135_520 * S)
        );
        assert_eq!(
            form("2026-12-01T14:32:00+01:00"),
            TimeForm::Unix(1_796_131_920 * S)
        );
        assert_eq!(
            form("2026-12-01T14:32:00.5-0230"),
            TimeForm::Unix(1_796_144_520 * S + S / 2)
        );
        assert_eq!(
            form("2026-12-01 14:32"),
            TimeForm::Local(CivilTime {
                year: 2026,
                month: 12,
                day: 1,
                hour: 14,
                minute: 32,
                second: 0,
                nanos: 0
            })
        );
        assert_eq!(
            form("14:32:00.125"),
            TimeForm::TimeOfDay((14 * 3600 + 32 * 60) * 1_000_000_000 + 125_000_000)
        );
        assert_eq!(
            form("09:05"),
            TimeForm::TimeOfDay((9 * 3600 + 5 * 60) * 1_000_000_000)
        );
    }

    #[test]
    fn bad_specs_say_what_is_accepted() {
        for bad in [
            "",
            "12.5",
            "+",
            "+soon",
            "@",
            "@12x",
            "@1.1234567891",
            "25:00:00",
            "14:60",
            "1:2:3",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00Z",
            "2026-12-01T14:32:00+25:00",
            "2026-12-01X14:32",
            "14:32:00.",
            "yesterday",
        ] {
            let err = TimeSpec::parse(bad).unwrap_err();
            assert!(err.contains("is not a time"), "{bad}: {err}");
            assert!(err.contains("HH:MM:SS[.fff]"), "{bad}: {err}");
        }
        assert!(TimeSpec::parse("2028-02-29T00:00Z").is_ok(), "a leap day");
    }

    #[test]
    fn resolution_counts_from_the_first_record_and_its_local_day() {
        let first = 1_796_135_520_000_000_000u64; // 2026-12-01T14:32:00Z
        let r = |t: &str| TimeSpec::parse(t).unwrap().resolve(Some(first), &Utc);
        assert_eq!(r("+1.5"), Ok(first + 1_500_000_000));
        assert_eq!(r("14:33:00"), Ok(first + 60_000_000_000));
        assert_eq!(
            r("00:00:00"),
            Ok(first - (14 * 3600 + 32 * 60) * 1_000_000_000)
        );
        assert_eq!(r("2026-12-01T14:32:00"), Ok(first));
        let none = TimeSpec::parse("+1").unwrap().resolve(None, &Utc);
        assert!(none.unwrap_err().contains("no timed records"));
        assert!(TimeSpec::parse("@1").unwrap().resolve(None, &Utc).is_ok());
        let early = TimeSpec::parse("1969-12-31T23:59:59Z").unwrap();
        assert!(early
            .resolve(None, &Utc)
            .unwrap_err()
            .contains("out of range"));
    }

    #[test]
    fn civil_days_round_trip() {
        for days in [-719_468i64, -1, 0, 1, 10_957, 20_423, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_423), (2025, 12, 1));
        let t = CivilTime::from_unix_utc(1_796_135_520 * S + 7);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.nanos),
            (2026, 12, 1, 14, 32, 7)
        );
    }
}
