//! The one table of settings: name, environment variable, `cupmon run` flag, value
//! syntax, default, allowed range and meaning. `--help`, the README's settings table
//! (checked by a test) and the Python docstrings are made from it, and every value
//! from every door goes through its parser.

use std::path::PathBuf;
use std::time::Duration;

use cupmon_log::Level;
use cupmon_records::ActivityKind;

use crate::table_accounting as accounting;
use crate::table_hang as hang;
use crate::table_metrics as metrics;
use crate::table_recorder as recorder;
use crate::units::{format_duration, format_size, parse_duration, parse_size};
use crate::{MonitorConfig, TraceFormat};

/// One setting.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The Python keyword and the canonical name (`buffer_size`).
    pub name: &'static str,
    pub env: &'static str,
    /// The `cupmon run` flag without dashes (`buffer-size`); `None` for settings that
    /// make no sense there (said in `help`).
    pub flag: Option<&'static str>,
    /// The syntax of a value, for help texts (`SIZE`, `DURATION`, ...).
    pub value: &'static str,
    /// The default, as a user would write it.
    pub default: &'static str,
    /// The allowed values, for error messages and help.
    pub allowed: &'static str,
    pub help: &'static str,
    pub(crate) apply: fn(&mut MonitorConfig, &str) -> Result<(), String>,
    pub(crate) show: fn(&MonitorConfig) -> Option<String>,
}

impl Setting {
    /// Parse `value` into `config` (no cross-setting checks: [`MonitorConfig::validate`]).
    pub(crate) fn apply(&self, config: &mut MonitorConfig, value: &str) -> Result<(), String> {
        (self.apply)(config, value)
    }

    /// The value `config` holds, as the parser accepts it; `None` when unset.
    pub fn show(&self, config: &MonitorConfig) -> Option<String> {
        (self.show)(config)
    }

    /// `--buffer-size` (or the environment variable for env-only settings).
    pub fn label(&self) -> String {
        match self.flag {
            Some(flag) => format!("{} (--{flag})", self.env),
            None => self.env.to_owned(),
        }
    }
}

pub(crate) fn size_in(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let n = parse_size(v)?;
    if n > hi {
        return Err(format!("{} is too large", format_size(n)));
    }
    if n < lo {
        return Err(format!("{} is too small", format_size(n)));
    }
    Ok(n)
}

pub(crate) fn duration_in(v: &str, lo: Duration, hi: Duration) -> Result<Duration, String> {
    let d = parse_duration(v)?;
    if d < lo || d > hi {
        return Err(format!("{} is out of range", format_duration(d)));
    }
    Ok(d)
}

pub(crate) fn flag(v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        _ => Err(format!("{v:?} is not 0 or 1")),
    }
}

fn kinds(v: &str) -> Result<Vec<ActivityKind>, String> {
    let kinds: Vec<ActivityKind> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            ActivityKind::parse(item)
                .filter(|k| k.decodable())
                .ok_or_else(|| format!("{item:?} is not an activity kind cupmon records"))
        })
        .collect::<Result<_, _>>()?;
    if kinds.is_empty() {
        return Err("no activity kinds".to_owned());
    }
    Ok(kinds)
}

pub(crate) const SEC: Duration = Duration::from_secs(1);

/// Every setting, in the order help texts list them.
pub static SETTINGS: &[Setting] = &[
    Setting {
        name: "output_dir",
        env: "CUPMON_OUTPUT_DIR",
        flag: Some("output"),
        value: "DIR",
        default: "cupmon-out",
        allowed: "a directory cupmon can create and write",
        help: "where the dumps go: a new subdirectory per process, never reused (DIR/<pid>-<UTC start>, DIR/rank<R>-<pid>-<UTC start>)",
        apply: |c, v| {
            if v.is_empty() {
                return Err("an empty path".to_owned());
            }
            c.output_dir = PathBuf::from(v);
            Ok(())
        },
        show: |c| Some(c.output_dir.display().to_string()),
    },
    Setting {
        name: "kinds",
        env: "CUPMON_KINDS",
        flag: Some("kinds"),
        value: "KIND,...",
        default: "CONCURRENT_KERNEL,MEMCPY,MEMSET",
        allowed: "CUPTI activity kinds cupmon decodes, by name or number (CONCURRENT_KERNEL, \
                  KERNEL, MEMCPY, MEMSET, MEMORY2, MEMORY_POOL, ...)",
        help: "the always-on activity kinds (add MEMORY2,MEMORY_POOL for allocations)",
        apply: |c, v| {
            c.kinds = kinds(v)?;
            Ok(())
        },
        show: |c| {
            Some(
                c.kinds
                    .iter()
                    .map(|k| k.cupti_name().into_owned())
                    .collect::<Vec<_>>()
                    .join(","),
            )
        },
    },
    Setting {
        name: "buffer_size",
        env: "CUPMON_BUFFER_SIZE",
        flag: Some("buffer-size"),
        value: "SIZE",
        default: "4MiB",
        allowed: "64KiB to 1GiB",
        help: "size of each activity buffer lent to CUPTI",
        apply: |c, v| {
            c.buffer_size = size_in(v, 64 << 10, 1 << 30)?;
            Ok(())
        },
        show: |c| Some(format_size(c.buffer_size)),
    },
    Setting {
        name: "max_outstanding",
        env: "CUPMON_MAX_OUTSTANDING",
        flag: Some("max-outstanding"),
        value: "SIZE",
        default: "2GiB",
        allowed: "at least two buffers, at most 64GiB",
        help: "cap on buffer memory (lent to CUPTI or waiting to be written); past it records \
               are dropped and counted, and CUPTI refused buffers under sustained launches \
               may stop recording altogether. Memory follows use: idle, 32-64 MiB",
        apply: |c, v| {
            c.max_outstanding_bytes = size_in(v, 128 << 10, 64 << 30)?;
            Ok(())
        },
        show: |c| Some(format_size(c.max_outstanding_bytes)),
    },
    Setting {
        name: "flush_period",
        env: "CUPMON_FLUSH_PERIOD",
        flag: Some("flush-period"),
        value: "DURATION",
        default: "1s",
        allowed: "10ms to 1h",
        help: "how often completed activity is flushed to the dump",
        apply: |c, v| {
            c.flush_period = duration_in(v, Duration::from_millis(10), 3600 * SEC)?;
            Ok(())
        },
        show: |c| Some(format_duration(c.flush_period)),
    },
    Setting {
        name: "window_at",
        env: "CUPMON_WINDOW_AT",
        flag: Some("window-at"),
        value: "DURATION",
        default: "",
        allowed: "0s to 365d",
        help: "open one trace window this long after the monitor starts (with --window-for)",
        apply: |c, v| {
            c.window_at = Some(duration_in(v, Duration::ZERO, 365 * 86_400 * SEC)?);
            Ok(())
        },
        show: |c| c.window_at.map(format_duration),
    },
    Setting {
        name: "window_for",
        env: "CUPMON_WINDOW_FOR",
        flag: Some("window-for"),
        value: "DURATION",
        default: "",
        allowed: "1ms to 1d",
        help: "keep that window open this long (it also closes at exit)",
        apply: |c, v| {
            c.window_for = Some(duration_in(v, Duration::from_millis(1), 86_400 * SEC)?);
            Ok(())
        },
        show: |c| c.window_for.map(format_duration),
    },
    Setting {
        name: "window_on_signal",
        env: "CUPMON_WINDOW_ON_SIGNAL",
        flag: Some("window-on-signal"),
        value: "0|1",
        default: "0",
        allowed: "0 or 1",
        help: "1: SIGUSR2 opens a trace window, the next SIGUSR2 closes it",
        apply: |c, v| {
            c.window_on_signal = flag(v)?;
            Ok(())
        },
        show: |c| Some(if c.window_on_signal { "1" } else { "0" }.to_owned()),
    },
    Setting {
        name: "trace_format",
        env: "CUPMON_TRACE_FORMAT",
        flag: Some("trace-format"),
        value: "FORMAT",
        default: "json",
        allowed: "json, pftrace",
        help: "how each trace window's trace is written: window-N.trace.json.gz (Chrome JSON) \
               or window-N.trace.pftrace (Perfetto's protobuf format, the same events)",
        apply: |c, v| {
            c.trace_format = TraceFormat::parse(v)
                .ok_or_else(|| format!("{v:?} is not a trace format"))?;
            Ok(())
        },
        show: |c| Some(c.trace_format.name().to_owned()),
    },
    Setting {
        name: "log",
        env: "CUPMON_LOG",
        flag: Some("log"),
        value: "LEVEL",
        default: "warn",
        allowed: "off, error, warn, info, debug",
        help: "how much cupmon says on stderr (prefixed `cupmon:`); debug adds trace-window \
               and CUPTI-sharing diagnostics",
        apply: |c, v| {
            c.log = Level::parse(v).ok_or_else(|| format!("{v:?} is not a log level"))?;
            Ok(())
        },
        show: |c| Some(c.log.name().to_owned()),
    },
    Setting {
        name: "libcupti",
        env: "CUPMON_LIBCUPTI",
        flag: Some("libcupti"),
        value: "PATH",
        default: "",
        allowed: "a libcupti.so file",
        help: "the libcupti to load (default: the one already loaded, then $CUDA_HOME, \
               /usr/local/cuda*, then the nvidia-cuda-cupti pip package)",
        apply: |c, v| {
            let path = PathBuf::from(v);
            if !path.is_file() {
                return Err("no such file".to_owned());
            }
            c.libcupti = Some(path);
            Ok(())
        },
        show: |c| c.libcupti.as_ref().map(|p| p.display().to_string()),
    },
    Setting {
        name: "enable",
        env: "CUPMON_ENABLE",
        flag: None,
        value: "0|1",
        default: "1",
        allowed: "0 or 1",
        help: "0: do not monitor this process (for a child that must not be traced; no flag: \
               cupmon run always monitors)",
        apply: |c, v| {
            c.enable = flag(v)?;
            Ok(())
        },
        show: |c| Some(if c.enable { "1" } else { "0" }.to_owned()),
    },
    recorder::KEEP,
    recorder::KEEP_FOR,
    recorder::SEGMENT_SIZE,
    recorder::SEGMENT_PERIOD,
    recorder::RAW,
    accounting::COUNT_LAUNCHES,
    accounting::PYTHON_STACKS,
    accounting::PYTHON_STACK_DEPTH,
    accounting::PYTHON_STACK_TIMING,
    accounting::RECOVER,
    accounting::STALL_PERIODS,
    accounting::STALL_KERNELS,
    accounting::FLUSH_OVERLAP,
    accounting::CUPTI_FLUSH_PERIOD,
    accounting::CUPTI_DEVICE_BUFFER_SIZE,
    accounting::CUPTI_DEVICE_BUFFER_POOL_LIMIT,
    metrics::METRICS_PORT,
    metrics::METRICS_FILE,
    metrics::METRICS_INTERVAL,
    hang::HANG_AFTER,
];

/// The setting named `key`: its name (`buffer_size`), environment variable
/// (`CUPMON_BUFFER_SIZE`) or flag (`buffer-size`).
pub fn setting(key: &str) -> Option<&'static Setting> {
    SETTINGS
        .iter()
        .find(|s| s.name == key || s.env == key || s.flag == Some(key))
}
