//! cupmon's one voice inside a traced program: every message of the library crates
//! (monitor, injection library) goes through [`error!`], [`warn!`], [`info!`] or
//! [`debug!`], prefixed `cupmon:` and filtered by one level, `CUPMON_LOG`
//! (`off`, `error`, `warn` (default), `info`, `debug`). The level is set once from the
//! validated settings ([`set_level`]); the environment is read only if nobody did.
//!
//! ```
//! cupmon_log::warn!("the dump writer is falling behind ({} buffers waiting)", 12);
//! ```

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// How much to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Level {
    Off = 0,
    Error = 1,
    #[default]
    Warn = 2,
    Info = 3,
    Debug = 4,
}

impl Level {
    /// Every level, quietest first.
    pub const ALL: [Level; 5] = [
        Level::Off,
        Level::Error,
        Level::Warn,
        Level::Info,
        Level::Debug,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Level::Off => "off",
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
        }
    }

    /// `warn`, `INFO`, ... (also `warning`).
    pub fn parse(text: &str) -> Option<Level> {
        let t = text.trim().to_ascii_lowercase();
        if t == "warning" {
            return Some(Level::Warn);
        }
        Level::ALL.into_iter().find(|l| l.name() == t)
    }

    fn from_u8(v: u8) -> Level {
        Level::ALL.get(v as usize).copied().unwrap_or_default()
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `UNSET` until [`set_level`] or the first message (which reads `CUPMON_LOG`).
const UNSET: u8 = u8::MAX;
static LEVEL: AtomicU8 = AtomicU8::new(UNSET);

/// The environment variable of the level.
pub const ENV: &str = "CUPMON_LOG";

/// Set the level for the rest of the process.
pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// The level in force: the one set, else `CUPMON_LOG` (`CUPMON_DEBUG` set means debug),
/// else warn.
pub fn level() -> Level {
    let v = LEVEL.load(Ordering::Relaxed);
    if v != UNSET {
        return Level::from_u8(v);
    }
    let from_env = std::env::var(ENV)
        .ok()
        .and_then(|v| Level::parse(&v))
        .or_else(|| std::env::var_os("CUPMON_DEBUG").map(|_| Level::Debug))
        .unwrap_or_default();
    set_level(from_env);
    from_env
}

/// Whether a message of `level` is printed.
pub fn enabled(level: Level) -> bool {
    level != Level::Off && level <= self::level()
}

/// Print one message (use the macros). One `write` per line, so that lines of
/// several threads do not interleave.
pub fn emit(level: Level, args: fmt::Arguments<'_>) {
    if !enabled(level) {
        return;
    }
    let prefix = match level {
        Level::Error => "cupmon: error: ",
        Level::Warn => "cupmon: warning: ",
        Level::Info | Level::Off => "cupmon: ",
        Level::Debug => "cupmon: debug: ",
    };
    let line = format!("{prefix}{args}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::emit($crate::Level::Error, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::emit($crate::Level::Warn, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::emit($crate::Level::Info, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => { $crate::emit($crate::Level::Debug, format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_order() {
        assert_eq!(Level::parse("WARN"), Some(Level::Warn));
        assert_eq!(Level::parse("warning"), Some(Level::Warn));
        assert_eq!(Level::parse("debug"), Some(Level::Debug));
        assert_eq!(Level::parse("loud"), None);
        assert!(Level::Error < Level::Warn && Level::Warn < Level::Debug);
        set_level(Level::Info);
        assert!(enabled(Level::Warn) && enabled(Level::Info) && !enabled(Level::Debug));
        set_level(Level::Off);
        assert!(!enabled(Level::Error));
    }
}
