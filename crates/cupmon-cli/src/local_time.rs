//! Local time, as the process sees it (`TZ`, else `/etc/localtime`): the [`LocalZone`]
//! that resolves `--from 14:32:00` and ISO times without zone, and how cupmon prints
//! instants (`14:32:00.000`, with the date when a span crosses midnight).

use chrono::{Datelike, LocalResult, NaiveDate, TimeZone, Timelike};
use cupmon_config::time_spec::{CivilTime, LocalZone};

/// The local time zone of the process.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemZone;

impl LocalZone for SystemZone {
    fn unix_ns(&self, t: &CivilTime) -> Result<i128, String> {
        let naive = NaiveDate::from_ymd_opt(t.year, t.month, t.day)
            .and_then(|d| d.and_hms_nano_opt(t.hour, t.minute, t.second, t.nanos))
            .ok_or_else(|| format!("{} is not a date and time", civil_text(t)))?;
        match chrono::Local.from_local_datetime(&naive) {
            LocalResult::Single(dt) | LocalResult::Ambiguous(dt, _) => {
                // Seconds and ns apart: chrono's i64 ns stop in 2262.
                Ok(i128::from(dt.timestamp()) * 1_000_000_000
                    + i128::from(dt.timestamp_subsec_nanos()))
            }
            LocalResult::None => Err(format!(
                "{} does not exist in local time (the clock skipped it)",
                civil_text(t)
            )),
        }
    }

    fn civil(&self, unix_ns: i128) -> CivilTime {
        let secs = unix_ns.div_euclid(1_000_000_000) as i64;
        let nanos = unix_ns.rem_euclid(1_000_000_000) as u32;
        match chrono::Local.timestamp_opt(secs, nanos) {
            LocalResult::Single(dt) | LocalResult::Ambiguous(dt, _) => CivilTime {
                year: dt.year(),
                month: dt.month(),
                day: dt.day(),
                hour: dt.hour(),
                minute: dt.minute(),
                second: dt.second(),
                nanos: dt.nanosecond().min(999_999_999),
            },
            LocalResult::None => CivilTime::from_unix_utc(unix_ns),
        }
    }
}

fn civil_text(t: &CivilTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// `14:32:00.000` (local).
pub fn clock(unix_ns: u64) -> String {
    let t = SystemZone.civil(i128::from(unix_ns));
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        t.hour,
        t.minute,
        t.second,
        t.nanos / 1_000_000
    )
}

/// `2026-12-01` (local).
pub fn date(unix_ns: u64) -> String {
    let t = SystemZone.civil(i128::from(unix_ns));
    format!("{:04}-{:02}-{:02}", t.year, t.month, t.day)
}

/// `14:32:00.000 - 14:33:00.000 local`, each end with its date when they fall on
/// different days; an open end is `the first record` / `the last record`.
pub fn span(from_ns: Option<u64>, to_ns: Option<u64>) -> String {
    let days_differ = match (from_ns, to_ns) {
        (Some(a), Some(b)) => date(a) != date(b.saturating_sub(1).max(a)),
        _ => false,
    };
    let end = |t: Option<u64>, open: &str| match t {
        Some(t) if days_differ => format!("{} {}", date(t), clock(t)),
        Some(t) => clock(t),
        None => open.to_owned(),
    };
    format!(
        "{} - {} local",
        end(from_ns, "the first record"),
        end(to_ns, "the last record")
    )
}

/// `2026-12-01T14:32:00.000` (local, to the ms): an ISO-8601 time without a zone,
/// which `--from` and `--to` read as local time. `round_up`: the next ms when
/// `unix_ns` is not on one (an end: a slice to it then holds the last record).
pub fn iso(unix_ns: u64, round_up: bool) -> String {
    let ns = if round_up {
        unix_ns.div_ceil(1_000_000) * 1_000_000
    } else {
        unix_ns
    };
    format!("{}T{}", date(ns), clock(ns))
}

/// `@1764599520.000`: Unix seconds to the ms, as `--from` takes them (rounded
/// up to the ms with `round_up`).
pub fn unix_s(unix_ns: u64, round_up: bool) -> String {
    let ms = if round_up {
        unix_ns.div_ceil(1_000_000)
    } else {
        unix_ns / 1_000_000
    };
    format!("@{}.{:03}", ms / 1000, ms % 1000)
}
