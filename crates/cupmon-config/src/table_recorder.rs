//! The flight recorder's settings: how the dump is cut into segments and how much of
//! it is kept. Part of [`crate::SETTINGS`].

use crate::table::{duration_in, flag, size_in, Setting, SEC};
use crate::units::{format_duration, format_size};

pub(crate) const KEEP: Setting = Setting {
    name: "keep",
    env: "CUPMON_KEEP",
    flag: Some("keep"),
    value: "SIZE",
    default: "auto",
    allowed: "16MiB to 64TiB, or auto",
    help: "disk budget of each process's dump; the oldest segments are retired first \
           (auto: 10 GiB or a tenth of the free space at start, whichever is smaller)",
    apply: |c, v| {
        c.keep = if v.trim() == "auto" {
            None
        } else {
            Some(size_in(v, 16 << 20, 64 << 40)?)
        };
        Ok(())
    },
    show: |c| Some(c.keep.map_or_else(|| "auto".to_owned(), format_size)),
};

pub(crate) const KEEP_FOR: Setting = Setting {
    name: "keep_for",
    env: "CUPMON_KEEP_FOR",
    flag: Some("keep-for"),
    value: "DURATION",
    default: "",
    allowed: "1m to 365d",
    help: "also retire segments whose records all ended longer ago than this",
    apply: |c, v| {
        c.keep_for = Some(duration_in(v, 60 * SEC, 365 * 86_400 * SEC)?);
        Ok(())
    },
    show: |c| c.keep_for.map(format_duration),
};

pub(crate) const SEGMENT_SIZE: Setting = Setting {
    name: "segment_size",
    env: "CUPMON_SEGMENT_SIZE",
    flag: Some("segment-size"),
    value: "SIZE",
    default: "64MiB",
    allowed: "1MiB to 4GiB",
    help: "a new segment file starts when the current one holds this many bytes on disk \
           (the budget can be exceeded by at most one segment)",
    apply: |c, v| {
        c.segment_size = size_in(v, 1 << 20, 4 << 30)?;
        Ok(())
    },
    show: |c| Some(format_size(c.segment_size)),
};

pub(crate) const SEGMENT_PERIOD: Setting = Setting {
    name: "segment_period",
    env: "CUPMON_SEGMENT_PERIOD",
    flag: Some("segment-period"),
    value: "DURATION",
    default: "10m",
    allowed: "1s to 1d",
    help: "a new segment file starts at least this often (the grain of --keep-for)",
    apply: |c, v| {
        c.segment_period = duration_in(v, SEC, 86_400 * SEC)?;
        Ok(())
    },
    show: |c| Some(format_duration(c.segment_period)),
};

pub(crate) const RAW: Setting = Setting {
    name: "raw",
    env: "CUPMON_RAW",
    flag: Some("raw"),
    value: "0|1",
    default: "0",
    allowed: "0 or 1",
    help: "1: write PyTorch's uncompressed single-file dump (cupti_monitor_raw_buffers.bin) \
           instead of compressed segments; recording stops when it reaches --keep",
    apply: |c, v| {
        c.raw = flag(v)?;
        Ok(())
    },
    show: |c| Some(if c.raw { "1" } else { "0" }.to_owned()),
};

/// The default budget: 10 GiB, or a tenth of `free_bytes`, whichever is smaller (but
/// never under 16 MiB, the smallest budget allowed).
pub fn default_keep(free_bytes: Option<u64>) -> u64 {
    let ten_gib = 10 << 30;
    free_bytes
        .map_or(ten_gib, |free| (free / 10).min(ten_gib))
        .max(16 << 20)
}
