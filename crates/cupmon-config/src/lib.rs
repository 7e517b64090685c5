//! cupmon's one door for settings: [`MonitorConfig`], filled from defaults, the
//! environment (the injection library), the `cupmon run` flags and the Python API,
//! all through the parsers of one table ([`SETTINGS`]) in one unit system (sizes as
//! `4M`/`256MiB`, durations as `500ms`/`1s`/`2m`). `cupmon run` validates the whole
//! configuration before it starts a program and hands the validated values on in the
//! environment.
//!
//! ```
//! use cupmon_config::MonitorConfig;
//! let mut c = MonitorConfig::new("cupmon-out/1234");
//! c.set("buffer_size", "8MiB").unwrap();
//! c.set("CUPMON_FLUSH_PERIOD", "500ms").unwrap();
//! c.validate().unwrap();
//! assert!(c.set("buffer_size", "abc").unwrap_err().to_string().contains("CUPMON_BUFFER_SIZE"));
//! ```

mod config;
pub mod env_vars;
mod table;
mod table_accounting;
mod table_hang;
mod table_metrics;
mod table_recorder;
pub mod time_spec;
pub mod units;

pub use config::{MonitorConfig, DEFAULT_KINDS, MAX_PYTHON_STACK_DEPTH, WINDOW_KINDS};
pub use cupmon_records::TraceFormat;
pub use table::{setting, Setting, SETTINGS};
pub use table_recorder::default_keep;

/// A setting that cannot be used, naming it, the value and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{label} = {value:?}: {problem} (allowed: {allowed})")]
    Invalid {
        label: String,
        value: String,
        problem: String,
        allowed: &'static str,
    },
    #[error("unknown setting {0:?} (settings: {names})", names = names())]
    Unknown(String),
    #[error("{0}")]
    Conflict(String),
}

fn names() -> String {
    SETTINGS
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl MonitorConfig {
    /// Set one setting by name, environment variable or flag from its text.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let s = setting(key).ok_or_else(|| ConfigError::Unknown(key.to_owned()))?;
        s.apply(self, value)
            .map_err(|problem| ConfigError::Invalid {
                label: s.label(),
                value: value.to_owned(),
                problem,
                allowed: s.allowed,
            })
    }

    /// Apply every `CUPMON_*` variable `get` knows (the legacy `CUPMON_DEBUG` means
    /// `CUPMON_LOG=debug`), then [`validate`](Self::validate).
    pub fn with_env(mut self, get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        self.apply_env(get)?;
        self.validate()?;
        Ok(self)
    }

    /// Apply the `CUPMON_*` variables without the final check (for callers that
    /// apply more settings on top, as `cupmon run` applies its flags).
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if get(env_vars::DEBUG).is_some() && get("CUPMON_LOG").is_none() {
            self.log = cupmon_log::Level::Debug;
        }
        for s in SETTINGS {
            if let Some(v) = get(s.env) {
                self.set(s.name, &v)?;
            }
        }
        Ok(())
    }

    /// Reject combinations that cannot work, naming the settings to change.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let conflict = |msg: String| Err(ConfigError::Conflict(msg));
        if self.max_outstanding_bytes < 2 * self.buffer_size {
            return conflict(format!(
                "CUPMON_MAX_OUTSTANDING (--max-outstanding) = {} must hold at least two buffers \
                 of CUPMON_BUFFER_SIZE (--buffer-size) = {}: raise it to {} or more, or use \
                 smaller buffers",
                units::format_size(self.max_outstanding_bytes),
                units::format_size(self.buffer_size),
                units::format_size(2 * self.buffer_size)
            ));
        }
        match (self.window_at, self.window_for) {
            (Some(_), None) => conflict(
                "CUPMON_WINDOW_AT (--window-at) needs CUPMON_WINDOW_FOR (--window-for): how \
                 long the window stays open"
                    .to_owned(),
            ),
            (None, Some(_)) => conflict(
                "CUPMON_WINDOW_FOR (--window-for) needs CUPMON_WINDOW_AT (--window-at): when \
                 the window opens"
                    .to_owned(),
            ),
            _ => Ok(()),
        }
    }

    /// The settings that differ from the defaults, as environment variables with
    /// values the parser reads back to the same configuration.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let defaults = MonitorConfig::new(&self.dump_dir);
        SETTINGS
            .iter()
            .filter_map(|s| {
                let value = s.show(self)?;
                (s.show(&defaults).as_ref() != Some(&value)).then_some((s.env, value))
            })
            .collect()
    }
}

/// The settings as a Markdown table (the README's, and `cupmon run --help`'s source).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| variable | `cupmon run` flag | default | allowed | meaning |\n| --- | --- | --- | --- | --- |\n",
    );
    for s in SETTINGS {
        let flag = match s.flag {
            None => "(none)".to_owned(),
            Some(f) if s.value == "0|1" => format!("`--{f}`"),
            Some(f) => format!("`--{f} {}`", s.value),
        };
        let default = if s.default.is_empty() {
            "(unset)".to_owned()
        } else {
            format!("`{}`", s.default)
        };
        out.push_str(&format!(
            "| `{}` | {flag} | {default} | {} | {} |\n",
            s.env, s.allowed, s.help
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::time::Duration;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn every_setting_has_a_unique_name_env_and_flag() {
        let (mut names, mut envs, mut flags) = (
            std::collections::HashSet::new(),
            std::collections::HashSet::new(),
            std::collections::HashSet::new(),
        );
        for s in SETTINGS {
            assert!(names.insert(s.name), "{}", s.name);
            assert!(envs.insert(s.env), "{}", s.env);
            if let Some(f) = s.flag {
                assert!(flags.insert(f), "{f}");
            }
            assert!(s.env.starts_with("CUPMON_"), "{}", s.env);
        }
    }

    #[test]
    fn defaults_parse_back_to_the_defaults() {
        let defaults = MonitorConfig::new("d");
        let mut c = MonitorConfig::new("d");
        for s in SETTINGS.iter().filter(|s| !s.default.is_empty()) {
            c.set(s.name, s.default).unwrap();
        }
        assert_eq!(c, defaults);
        assert!(defaults.to_env().is_empty());
    }

    #[test]
    fn env_overrides_defaults_and_round_trips() {
        let c = MonitorConfig::new("d")
            .with_env(env(&[
                ("CUPMON_BUFFER_SIZE", "1M"),
                ("CUPMON_KINDS", "CONCURRENT_KERNEL,memory2"),
                ("CUPMON_FLUSH_PERIOD", "250ms"),
                ("CUPMON_WINDOW_AT", "30"),
                ("CUPMON_WINDOW_FOR", "2s"),
            ]))
            .unwrap();
        assert_eq!(c.buffer_size, 1 << 20);
        assert_eq!(c.flush_period, Duration::from_millis(250));
        assert_eq!(c.window_at, Some(Duration::from_secs(30)));
        let pairs = c.to_env();
        let back = MonitorConfig::new("d")
            .with_env(|k| pairs.iter().find(|(e, _)| *e == k).map(|(_, v)| v.clone()))
            .unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn bad_values_name_the_setting_and_the_range() {
        let err = MonitorConfig::new("d")
            .with_env(env(&[("CUPMON_BUFFER_SIZE", "abc")]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "CUPMON_BUFFER_SIZE (--buffer-size) = \"abc\": \"abc\" is not a size (use e.g. 4M \
             or 256MiB) (allowed: 64KiB to 1GiB)"
        );
        let err = MonitorConfig::new("d")
            .with_env(env(&[("CUPMON_FLUSH_PERIOD", "1e30")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("CUPMON_FLUSH_PERIOD") && err.contains("10ms to 1h"),
            "{err}"
        );
        let err = MonitorConfig::new("d")
            .with_env(env(&[
                ("CUPMON_BUFFER_SIZE", "200M"),
                ("CUPMON_MAX_OUTSTANDING", "256MiB"),
            ]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("must hold at least two buffers"), "{err}");
        assert!(MonitorConfig::new("d")
            .with_env(env(&[("CUPMON_KINDS", "NAME")]))
            .is_err());
        assert!(MonitorConfig::new("d")
            .with_env(env(&[("CUPMON_WINDOW_AT", "3")]))
            .is_err());
        assert!(matches!(
            MonitorConfig::new("d").set("nope", "1"),
            Err(ConfigError::Unknown(_))
        ));
    }

    #[test]
    fn the_readme_lists_the_settings_of_the_table() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
                .expect("README.md");
        let (begin, end) = ("<!-- settings:begin -->\n", "<!-- settings:end -->");
        let start = readme.find(begin).expect("settings markers in README.md") + begin.len();
        let stop = readme[start..].find(end).expect("end marker") + start;
        assert_eq!(
            &readme[start..stop],
            markdown_table(),
            "README.md's settings table is out of date; paste this between the markers:\n{}",
            markdown_table()
        );
    }

    #[test]
    fn legacy_debug_variable_means_debug_logging() {
        let c = MonitorConfig::new("d")
            .with_env(env(&[("CUPMON_DEBUG", "1")]))
            .unwrap();
        assert_eq!(c.log, cupmon_log::Level::Debug);
    }
}
