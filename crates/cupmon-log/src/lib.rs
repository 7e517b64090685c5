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
use std::sync::Mutex;

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
    {
        let mut captured = lock_captured();
        if let Some(lines) = captured.as_mut() {
            lines.push(line);
            return;
        }
    }
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Lines said while a [`Capture`] is alive, instead of stderr (`None`: none is).
static CAPTURED: Mutex<Option<Vec<String>>> = Mutex::new(None);

fn lock_captured() -> std::sync::MutexGuard<'static, Option<Vec<String>>> {
    // A test that panicked while holding it left good lines behind.
    CAPTURED.lock().unwrap_or_else(|e| e.into_inner())
}

/// For tests of warning paths: while it lives, every message of the process
/// (from any thread) is kept for [`Capture::lines`] instead of printed, so
/// that a test asserts on the warning it provokes rather than printing it into
/// a passing run's output. One at a time: tests that capture run one after
/// another (the monitor's tests hold a lock for the fake libcupti anyway).
#[derive(Debug)]
#[must_use = "messages are captured only while the Capture lives"]
pub struct Capture(());

impl Capture {
    /// Start capturing. Panics if another capture is alive.
    pub fn start() -> Capture {
        let mut captured = lock_captured();
        assert!(captured.is_none(), "cupmon_log::Capture is already alive");
        *captured = Some(Vec::new());
        Capture(())
    }

    /// The lines said so far, each with its `cupmon: ...:` prefix and no newline.
    pub fn lines(&self) -> Vec<String> {
        lock_captured()
            .iter()
            .flatten()
            .map(|l| l.trim_end_matches('\n').to_owned())
            .collect()
    }

    /// Whether a line said so far contains `text`.
    pub fn said(&self, text: &str) -> bool {
        self.lines().iter().any(|l| l.contains(text))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        *lock_captured() = None;
    }
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
        set_level(Level::Warn);
        let log = Capture::start();
        warn!("the dump writer is falling behind ({} buffers waiting)", 2);
        debug!("not at this level");
        assert_eq!(
            log.lines(),
            ["cupmon: warning: the dump writer is falling behind (2 buffers waiting)"]
        );
        assert!(log.said("falling behind") && !log.said("not at this level"));
        drop(log);
        assert!(lock_captured().is_none(), "back to stderr");
    }
}
