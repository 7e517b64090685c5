//! The setting of hang detection. Part of [`crate::SETTINGS`].

use std::time::Duration;

use crate::table::{duration_in, Setting};
use crate::units::format_duration;

pub(crate) const HANG_AFTER: Setting = Setting {
    name: "hang_after",
    env: "CUPMON_HANG_AFTER",
    flag: Some("hang-after"),
    value: "DURATION",
    default: "5m",
    allowed: "0 (off) or 1s to 7d",
    help: "write a hang record (hang-N.json: work in flight per stream, threads, NCCL \
           collectives) into the dump when no kernel, copy or memset has completed for this \
           long; 0: never on a timer (SIGTERM, SIGABRT and `cupmon hang-dump` still write one)",
    apply: |c, v| {
        let d = duration_in(v, Duration::ZERO, Duration::from_secs(7 * 86_400))?;
        if d > Duration::ZERO && d < Duration::from_secs(1) {
            return Err(format!("{} is out of range", format_duration(d)));
        }
        c.hang_after = (d > Duration::ZERO).then_some(d);
        Ok(())
    },
    show: |c| Some(c.hang_after.map_or_else(|| "0".to_owned(), format_duration)),
};
