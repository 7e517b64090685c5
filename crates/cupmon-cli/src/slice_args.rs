//! The time-slice flags of `cupmon decode` and `cupmon stats` (`--from T`, `--to T`,
//! `--last DURATION`) and `stats --timeline [BIN]`, apart from cli.rs so that other
//! commands' flags and these merge without conflict. They resolve against the dump
//! (relative times need its first or last record) into a [`TimeRange`].

use std::time::Duration;

use anyhow::Result;
use clap::Args;
use cupmon_config::time_spec::TimeSpec;
use cupmon_records::{DecodeReport, Dump, TimeRange};

use crate::exit::BadInput;
use crate::local_time::{self, SystemZone};

#[derive(Debug, Clone, Default, Args)]
pub struct SliceArgs {
    /// Only the records whose time interval overlaps [--from, --to): `+12.5` or `+90s`
    /// (after the dump's first record), `@1764567890.25` (Unix seconds), ISO-8601
    /// (`2026-12-01T14:32:00Z`, `...+01:00`; without zone: local time) or
    /// `HH:MM:SS[.fff]` (local time on the day of the dump's first record).
    #[arg(long, value_name = "T", value_parser = time_spec)]
    pub from: Option<TimeSpec>,
    /// End of the slice (excluded), in the same forms as --from.
    #[arg(long, value_name = "T", value_parser = time_spec)]
    pub to: Option<TimeSpec>,
    /// Only the last DURATION before the dump's last record (e.g. 30s, 5m).
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, conflicts_with_all = ["from", "to"])]
    pub last: Option<Duration>,
}

fn time_spec(text: &str) -> Result<TimeSpec, String> {
    TimeSpec::parse(text)
}

fn positive_duration(text: &str) -> Result<Duration, String> {
    match cupmon_config::units::parse_duration(text)? {
        d if d.is_zero() => Err(format!("{text:?}: the duration must be longer than 0")),
        d => Ok(d),
    }
}

/// A slice resolved against its dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub range: TimeRange,
    /// The dump's first and last record, when resolving needed them.
    pub span: Option<(u64, u64)>,
}

impl SliceArgs {
    pub fn given(&self) -> bool {
        self.from.is_some() || self.to.is_some() || self.last.is_some()
    }

    /// The slice of `dump` the flags name (`None` without flags); errors name the flag
    /// and its value.
    pub fn resolve(&self, dump: &Dump) -> Result<Option<Slice>> {
        self.resolve_in(|| Ok(dump.time_span()?.get()))
    }

    /// [`SliceArgs::resolve`] against the first and last record that `span` gives
    /// (called only when needed): `cupmon report` resolves once for all the dumps of a run.
    pub fn resolve_in(
        &self,
        span: impl FnOnce() -> Result<Option<(u64, u64)>>,
    ) -> Result<Option<Slice>> {
        if !self.given() {
            return Ok(None);
        }
        let needs_span = self.last.is_some()
            || [&self.from, &self.to]
                .into_iter()
                .flatten()
                .any(TimeSpec::needs_first_record);
        let span = if needs_span { span()? } else { None };
        if let Some(last) = self.last {
            let Some((_, last_ns)) = span else {
                return Err(BadInput(format!(
                    "--last {}: the dump has no timed records",
                    cupmon_config::units::format_duration(last)
                ))
                .into());
            };
            let from = last_ns.saturating_sub(u64::try_from(last.as_nanos()).unwrap_or(u64::MAX));
            return Ok(Some(Slice {
                range: TimeRange::new(Some(from), None),
                span,
            }));
        }
        let first = span.map(|s| s.0);
        let resolve = |flag: &str, spec: &Option<TimeSpec>| -> Result<Option<u64>> {
            spec.as_ref()
                .map(|s| {
                    s.resolve(first, &SystemZone)
                        .map_err(|why| BadInput(format!("{flag} {s}: {why}")).into())
                })
                .transpose()
        };
        let from = resolve("--from", &self.from)?;
        let to = resolve("--to", &self.to)?;
        if let (Some(f), Some(t)) = (from, to) {
            if f >= t {
                return Err(BadInput(format!(
                    "--from {} ({}) is not before --to {} ({}): the slice [from, to) is empty",
                    self.from.as_ref().map_or("", |s| s.text.as_str()),
                    describe_instant(f),
                    self.to.as_ref().map_or("", |s| s.text.as_str()),
                    describe_instant(t)
                ))
                .into());
            }
        }
        Ok(Some(Slice {
            range: TimeRange::new(from, to),
            span,
        }))
    }
}

/// `2026-12-01 14:32:00.000 local, @1796135520.000000000`.
fn describe_instant(ns: u64) -> String {
    format!(
        "{} {} local, @{}.{:09}",
        local_time::date(ns),
        local_time::clock(ns),
        ns / 1_000_000_000,
        ns % 1_000_000_000
    )
}

impl Slice {
    /// `slice: 14:32:00.000 - 14:33:00.000 local (60.0 s), 4 of 17 segments read (...)`.
    pub fn line(&self, dump: &Dump, report: &DecodeReport) -> String {
        let from = self.range.from_ns.or(self.span.map(|s| s.0));
        let to = self.range.to_ns.or(self.span.map(|s| s.1));
        let mut line = format!("slice: {}", local_time::span(from, to));
        if let (Some(f), Some(t)) = (from, to) {
            line.push_str(&format!(" ({:.1} s)", t.saturating_sub(f) as f64 / 1e9));
        }
        match dump.segments() {
            Some(list) => {
                let n = list.live.len() as u64;
                let digested = report.segments_digested;
                line.push_str(&format!(
                    ", {} of {n} segments read ({} frames, {} skipped by their time index)",
                    n.saturating_sub(report.segments_skipped + digested),
                    report.chunks,
                    report.frames_skipped
                ));
                if digested > 0 {
                    line.push_str(&format!(", {digested} from their digests"));
                }
            }
            None => line.push_str(
                ", the whole raw-buffer file read (PyTorch's single-file layout has no time index)",
            ),
        }
        line
    }

    /// The message for a slice that holds no records: where the records are.
    pub fn empty_message(&self, dump: &Dump) -> String {
        let span = self
            .span
            .or_else(|| dump.time_span().ok().and_then(|s| s.get()));
        let mut msg = format!(
            "no records in the slice {}",
            local_time::span(self.range.from_ns, self.range.to_ns)
        );
        match span {
            Some((first, last)) => msg.push_str(&format!(
                "; the dump's records span {}",
                local_time::span(Some(first), Some(last))
            )),
            None => msg.push_str("; the dump has no timed records"),
        }
        msg
    }
}

/// `--timeline [BIN]`.
#[derive(Debug, Clone, Default, Args)]
pub struct TimelineArgs {
    /// Print a timeline to pick a slice from: GPU busy %, kernels/s and copy bytes/s per
    /// bin of BIN (e.g. 10s, 1m); without a value, about 60 bins. Put it after DUMP.
    #[arg(long, value_name = "BIN", num_args = 0..=1, default_missing_value = "auto", value_parser = timeline_bin)]
    pub timeline: Option<BinSize>,
}

/// A timeline's bin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinSize {
    /// About 60 bins of a round length.
    Auto,
    Every(Duration),
}

impl BinSize {
    pub fn duration(self) -> Option<Duration> {
        match self {
            Self::Auto => None,
            Self::Every(d) => Some(d),
        }
    }
}

fn timeline_bin(text: &str) -> Result<BinSize, String> {
    if text == "auto" {
        return Ok(BinSize::Auto);
    }
    positive_duration(text).map(BinSize::Every).map_err(|e| {
        format!("{e}; a bin is a duration such as 10s or 1m (--timeline goes after DUMP)")
    })
}
