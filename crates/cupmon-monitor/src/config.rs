//! The monitor's settings: a plain struct, filled from defaults, from the
//! environment (the injection library) or from arguments (CLI, Python).

use std::path::PathBuf;
use std::time::Duration;

use cupmon_cupti::ActivityKind;

use crate::env_vars;
use crate::MonitorError;

/// Settings of one monitoring session.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorConfig {
    /// The dump directory of this process (created if needed).
    pub dump_dir: PathBuf,
    /// Always-on kinds.
    pub kinds: Vec<ActivityKind>,
    /// Size of each buffer lent to CUPTI.
    pub buffer_size: usize,
    /// Most buffer memory in existence (lent, queued or free); past it CUPTI
    /// gets no buffer and drops records, which are counted.
    pub max_outstanding_bytes: usize,
    /// Buffers kept ready in the free list, so a request is a pop.
    pub free_buffers: usize,
    /// Period of the flush that keeps the dump about this far behind.
    pub flush_period: Duration,
}

impl MonitorConfig {
    /// Defaults for a dump directory: kernels, copies and memsets; 4 MiB
    /// buffers; a 256 MiB cap; a 1 s flush.
    pub fn new(dump_dir: impl Into<PathBuf>) -> Self {
        Self {
            dump_dir: dump_dir.into(),
            kinds: DEFAULT_KINDS.to_vec(),
            buffer_size: 4 << 20,
            // With CUPTI 13.0 on the H200, 23-25 buffers were out at once (lent
            // to CUPTI or queued for the worker) at 1.2-1.5 M kernels/s: a 64 MiB
            // cap (16 buffers) lost a third of a 10 s burst. Only what is out and
            // the ready reserve are allocated; the rest of the cap costs nothing.
            max_outstanding_bytes: 256 << 20,
            // 8 x 4 MiB ready: a request is a pop while the worker refills.
            free_buffers: 8,
            flush_period: Duration::from_secs(1),
        }
    }

    /// Apply the `CUPMON_*` variables (see [`env_vars`]) on top of `self`.
    pub fn with_env(mut self, get: impl Fn(&str) -> Option<String>) -> Result<Self, MonitorError> {
        if let Some(v) = get(env_vars::KINDS) {
            self.kinds = parse_kinds(&v)?;
        }
        if let Some(v) = get(env_vars::BUFFER_SIZE) {
            self.buffer_size = parse_size(env_vars::BUFFER_SIZE, &v)?;
        }
        if let Some(v) = get(env_vars::MAX_OUTSTANDING) {
            self.max_outstanding_bytes = parse_size(env_vars::MAX_OUTSTANDING, &v)?;
        }
        if let Some(v) = get(env_vars::FLUSH_PERIOD) {
            self.flush_period = parse_seconds(env_vars::FLUSH_PERIOD, &v)?;
        }
        self.validate()?;
        Ok(self)
    }

    /// Reject settings that cannot work, with the reason.
    pub fn validate(&self) -> Result<(), MonitorError> {
        let bad = |msg: String| Err(MonitorError::Config(msg));
        if self.buffer_size < 64 << 10 || self.buffer_size > u32::MAX as usize {
            return bad(format!(
                "buffer size {} is out of range (64 KiB to 4 GiB)",
                self.buffer_size
            ));
        }
        if self.max_outstanding_bytes < 2 * self.buffer_size {
            return bad(format!(
                "the buffer memory cap ({} bytes) must hold at least two buffers of {} bytes",
                self.max_outstanding_bytes, self.buffer_size
            ));
        }
        if self.flush_period.is_zero() {
            return bad("the flush period must be positive".to_owned());
        }
        if self.kinds.is_empty() {
            return bad("no activity kinds to record".to_owned());
        }
        Ok(())
    }

    /// How many buffers fit under the cap.
    pub fn max_buffers(&self) -> usize {
        self.max_outstanding_bytes / self.buffer_size
    }
}

/// Kernels, copies and memsets: the always-on set.
pub const DEFAULT_KINDS: [ActivityKind; 3] = [
    ActivityKind::CONCURRENT_KERNEL,
    ActivityKind::MEMCPY,
    ActivityKind::MEMSET,
];

/// Kinds a trace window adds, in an order that satisfies their dependencies
/// (external correlation needs runtime; CUDA events need synchronization).
pub const WINDOW_KINDS: [ActivityKind; 6] = [
    ActivityKind::RUNTIME,
    ActivityKind::DRIVER,
    ActivityKind::EXTERNAL_CORRELATION,
    ActivityKind::OVERHEAD,
    ActivityKind::SYNCHRONIZATION,
    ActivityKind::CUDA_EVENT,
];

/// `CONCURRENT_KERNEL,MEMCPY,2` -> kinds (names as CUPTI spells them, without
/// the `CUPTI_ACTIVITY_KIND_` prefix, or numbers).
pub fn parse_kinds(text: &str) -> Result<Vec<ActivityKind>, MonitorError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            if let Ok(n) = item.parse::<u32>() {
                return Ok(ActivityKind(n));
            }
            let name = item
                .trim_start_matches("CUPTI_ACTIVITY_KIND_")
                .to_ascii_uppercase();
            (0..64)
                .map(ActivityKind)
                .find(|k| k.name() == Some(name.as_str()))
                .ok_or_else(|| {
                    MonitorError::Config(format!(
                        "{}: unknown activity kind {item:?}",
                        env_vars::KINDS
                    ))
                })
        })
        .collect()
}

/// `4194304`, `4096K`, `4M`, `1G` -> bytes.
pub fn parse_size(var: &str, text: &str) -> Result<usize, MonitorError> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => {
            return Err(MonitorError::Config(format!(
                "{var}: bad size {text:?} (use e.g. 4M)"
            )))
        }
    };
    digits
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| MonitorError::Config(format!("{var}: bad size {text:?} (use e.g. 4M)")))
}

/// `1`, `0.5` -> a duration.
pub fn parse_seconds(var: &str, text: &str) -> Result<Duration, MonitorError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| MonitorError::Config(format!("{var}: bad number of seconds {text:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kinds_sizes_and_seconds() {
        assert_eq!(
            parse_kinds("CONCURRENT_KERNEL, memcpy,2").expect("kinds"),
            vec![
                ActivityKind::CONCURRENT_KERNEL,
                ActivityKind::MEMCPY,
                ActivityKind::MEMSET
            ]
        );
        assert!(parse_kinds("NOPE").is_err());
        assert_eq!(parse_size("X", "4M").expect("size"), 4 << 20);
        assert_eq!(parse_size("X", "65536").expect("size"), 65536);
        assert!(parse_size("X", "4Q").is_err());
        assert_eq!(
            parse_seconds("X", "0.5").expect("s"),
            Duration::from_millis(500)
        );
        assert!(parse_seconds("X", "-1").is_err());
    }

    #[test]
    fn env_overrides_defaults_and_bad_values_are_errors() {
        let env = |k: &str| match k {
            "CUPMON_BUFFER_SIZE" => Some("1M".to_owned()),
            "CUPMON_KINDS" => Some("CONCURRENT_KERNEL".to_owned()),
            _ => None,
        };
        let c = MonitorConfig::new("/tmp/x").with_env(env).expect("config");
        assert_eq!(c.buffer_size, 1 << 20);
        assert_eq!(c.kinds, vec![ActivityKind::CONCURRENT_KERNEL]);
        let bad = |k: &str| (k == "CUPMON_MAX_OUTSTANDING").then(|| "1M".to_owned());
        assert!(MonitorConfig::new("/tmp/x").with_env(bad).is_err());
    }
}
