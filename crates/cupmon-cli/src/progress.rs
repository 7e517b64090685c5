//! A progress line on stderr for long work (only on a terminal, only for
//! inputs large enough to be worth it).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Inputs smaller than this finish before a progress line would help.
pub const WORTH_SHOWING: u64 = 100 << 20;

#[derive(Debug)]
pub struct Progress {
    what: &'static str,
    total: u64,
    shown: bool,
    last: Instant,
}

impl Progress {
    /// A progress line for `total` bytes of `what`; silent when stderr is not
    /// a terminal or the work is small.
    pub fn bytes(what: &'static str, total: u64) -> Self {
        Self {
            what,
            total,
            shown: total >= WORTH_SHOWING && std::io::stderr().is_terminal(),
            last: Instant::now() - Duration::from_secs(1),
        }
    }

    /// A progress line over a dump's buffer files (`dir` is the dump): its raw buffers
    /// file or its segments. A slice reads less; [`Progress::update_of`] corrects it.
    pub fn dump(what: &'static str, dir: &std::path::Path) -> Self {
        Self::bytes(what, Self::dump_bytes(dir))
    }

    /// The bytes of a dump's buffer files: its raw buffers file and its segments.
    pub fn dump_bytes(dir: &std::path::Path) -> u64 {
        let raw = dir.join(cupmon_records::dump::RAW_BUFFERS_FILE);
        let segments = std::fs::read_dir(dir.join(cupmon_records::dump::SEGMENTS_DIR))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum::<u64>();
        std::fs::metadata(raw).map_or(0, |m| m.len()) + segments
    }

    /// [`Progress::update`] with the total the work itself reports.
    pub fn update_of(&mut self, done: u64, total: u64) {
        if total > 0 {
            self.total = total;
        }
        self.update(done);
    }

    pub fn update(&mut self, done: u64) {
        if !self.shown || self.last.elapsed() < Duration::from_millis(100) {
            return;
        }
        self.last = Instant::now();
        let pct = (done.min(self.total) * 100)
            .checked_div(self.total)
            .unwrap_or(0);
        eprint!(
            "\r{}: {} / {} MB ({pct}%)   ",
            self.what,
            done >> 20,
            self.total >> 20
        );
        std::io::stderr().flush().ok();
    }

    pub fn finish(&mut self) {
        if self.shown {
            eprint!("\r{:60}\r", "");
            self.shown = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
