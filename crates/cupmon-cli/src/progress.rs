//! A progress line on stderr for long work: only on a terminal, and only once
//! the work has run for [`SHOW_AFTER`]. Decided by the time the work takes, not
//! by its bytes on disk: a compressed dump of 60 MB held 70 M events whose
//! Chrome decode ran 100 s without a line when a size threshold decided.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Work that ends sooner needs no progress line.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct Progress {
    what: &'static str,
    total: u64,
    /// On a terminal, and not finished.
    showing: bool,
    started: Instant,
    last: Instant,
    /// A line was printed (so [`Progress::finish`] clears it).
    printed: bool,
}

impl Progress {
    /// A progress line for `total` bytes of `what`; silent when stderr is not
    /// a terminal, and until the work has run for [`SHOW_AFTER`].
    pub fn bytes(what: &'static str, total: u64) -> Self {
        Self::started_at(what, total, std::io::stderr().is_terminal(), Instant::now())
    }

    fn started_at(what: &'static str, total: u64, terminal: bool, started: Instant) -> Self {
        Self {
            what,
            total,
            showing: terminal,
            started,
            last: started,
            printed: false,
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
        if let Some(line) = self.line(done, Instant::now()) {
            eprint!("{line}");
            std::io::stderr().flush().ok();
        }
    }

    /// The line to print at `now` with `done` of the total, if one is due: after
    /// [`SHOW_AFTER`], then at most every 100 ms.
    fn line(&mut self, done: u64, now: Instant) -> Option<String> {
        if !self.showing
            || now.duration_since(self.started) < SHOW_AFTER
            || (self.printed && now.duration_since(self.last) < Duration::from_millis(100))
        {
            return None;
        }
        self.last = now;
        self.printed = true;
        let pct = (done.min(self.total) * 100)
            .checked_div(self.total)
            .unwrap_or(0);
        Some(format!(
            "\r{}: {} / {} MB ({pct}%)   ",
            self.what,
            done >> 20,
            self.total >> 20
        ))
    }

    pub fn finish(&mut self) {
        if self.printed {
            eprint!("\r{:60}\r", "");
        }
        self.showing = false;
        self.printed = false;
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_a_small_dump_whose_decode_ran_100_s_showed_no_progress() {
        // 60 MB on disk, far under any size threshold: after a second, a line.
        let t0 = Instant::now();
        let mut p = Progress::started_at("writing", 60 << 20, true, t0);
        assert_eq!(p.line(1 << 20, t0 + Duration::from_millis(500)), None);
        let line = p
            .line(30 << 20, t0 + Duration::from_secs(2))
            .expect("a line");
        assert!(line.contains("writing: 30 / 60 MB (50%)"), "{line}");
        assert_eq!(
            p.line(31 << 20, t0 + Duration::from_millis(2050)),
            None,
            "100 ms apart"
        );
        assert!(p.line(32 << 20, t0 + Duration::from_millis(2200)).is_some());
    }

    #[test]
    fn no_line_off_a_terminal_or_after_finish() {
        let t0 = Instant::now();
        let mut p = Progress::started_at("reading", 1 << 40, false, t0);
        assert_eq!(p.line(1, t0 + Duration::from_secs(60)), None);
        let mut p = Progress::started_at("reading", 1 << 40, true, t0);
        p.finish();
        assert_eq!(p.line(1, t0 + Duration::from_secs(60)), None);
    }
}
