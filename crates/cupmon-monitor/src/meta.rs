//! The dump's meta file: the session as PyTorch's monitor describes it, plus
//! cupmon's keys (library path, version, dropped records so far, whether the session
//! is still open, rank).

use std::time::{SystemTime, UNIX_EPOCH};

use cupmon_cupti::Cupti;
use cupmon_records::MetaFile;

use serde::{Deserialize, Serialize};

use crate::{MonitorConfig, MonitorError};

/// A part of the stats the monitor keeps in the dump's meta under its own key.
pub trait MetaEntry: Serialize + for<'de> Deserialize<'de> {
    const KEY: &'static str;

    fn write_to(&self, meta: &mut MetaFile) {
        if let Ok(value) = serde_json::to_value(self) {
            meta.set(Self::KEY, value);
        }
    }

    /// None when the meta has no such entry (dumps of other writers) or a
    /// malformed one.
    fn from_meta(meta: &MetaFile) -> Option<Self> {
        serde_json::from_value(meta.json().get(Self::KEY)?.clone()).ok()
    }
}

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The dump's meta, as PyTorch's monitor writes it plus cupmon's keys.
pub(crate) fn session_meta(
    cupti: &'static Cupti,
    config: &MonitorConfig,
) -> Result<MetaFile, MonitorError> {
    let mut meta = MetaFile::new();
    meta.set(
        "activities",
        config.kinds.iter().map(|k| k.0).collect::<Vec<u32>>(),
    )
    .set("buffer_size", config.buffer_size)
    // What the longest flush (`flush_longest_ms`) is measured against.
    .set("flush_period_ms", config.flush_period.as_millis() as u64)
    .set("cupti_version", cupti.version())
    .set("meta_version", 2)
    .set("pid", std::process::id())
    .set("raw_buffer_dump", true)
    .set("session_start_cupti_ns", cupti.timestamp()?)
    .set("session_start_monotonic_ns", cupmon_cupti::monotonic_ns())
    .set("session_start_unix_ns", unix_ns())
    .set("timestamp_mode", "cupti_default")
    .set("cupmon_version", env!("CARGO_PKG_VERSION"))
    .set("cupti_library", cupti.path().display().to_string())
    // Open until the meta written at a clean stop says otherwise: a dump whose process
    // is killed keeps `true`, and readers then know the counts below are not final.
    .set("session_open", true)
    .set("dropped_records", 0)
    .set("chunks_written", 0);
    // For `cupmon report`'s header: what ran, where.
    if let Some(command) = own_command() {
        meta.set("command", command);
    }
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        meta.set("host", host.trim());
    }
    if let Ok(rank) = std::env::var(cupmon_config::env_vars::RANK) {
        meta.set("rank", rank);
    }
    // Which `cupmon run` started the process: its summary lists only its own dumps.
    if let Ok(run) = std::env::var(cupmon_config::env_vars::RUN_ID) {
        meta.set("run_id", run);
    }
    if let Some(info) = distributed_info() {
        meta.set(
            "distributedInfo",
            serde_json::to_value(info).unwrap_or_default(),
        );
    }
    Ok(meta)
}

/// The process's command line (`/proc/self/cmdline`), `None` when unreadable.
fn own_command() -> Option<Vec<String>> {
    let bytes = std::fs::read("/proc/self/cmdline").ok()?;
    Some(
        bytes
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// This process's place in a distributed job, from the launcher's environment.
pub(crate) fn distributed_info() -> Option<cupmon_window::DistributedInfo> {
    cupmon_window::DistributedInfo::from_env(|k| std::env::var(k).ok())
}
