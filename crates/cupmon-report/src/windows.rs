//! The trace windows a process took: `window-N.json` in its dump directory (and the
//! trace `window-N.trace.json.gz` beside it), with the time they cover. The window's
//! JSON is streamed: only its events' `start_ns` and `end_ns` are kept, so a large
//! window costs its parse time, not its size in memory.

use std::fmt;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// One window of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowMark {
    /// N of `window-N.json`.
    pub number: u32,
    /// First start and last end of its events (Unix ns); `None` when it holds none.
    pub span: Option<(u64, u64)>,
    pub events: u64,
    /// `window-N.trace.json.gz` when there is one, else `window-N.json`.
    pub file: PathBuf,
}

/// Why a window file could not be read (the report notes it and goes on).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {why}", path.display())]
pub struct WindowError {
    pub path: PathBuf,
    pub why: String,
}

/// The windows in `dir`, by number; unreadable ones as errors beside them.
pub fn find_windows(dir: &Path) -> (Vec<WindowMark>, Vec<WindowError>) {
    let mut numbers: Vec<u32> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let n = name
                .to_str()?
                .strip_prefix("window-")?
                .strip_suffix(".json")?;
            n.parse().ok()
        })
        .collect();
    numbers.sort_unstable();
    let (mut marks, mut errors) = (Vec::new(), Vec::new());
    for number in numbers {
        let json = dir.join(format!("window-{number}.json"));
        let trace = dir.join(format!("window-{number}.trace.json.gz"));
        match window_span(&json) {
            Ok((span, events)) => marks.push(WindowMark {
                number,
                span,
                events,
                file: if trace.is_file() { trace } else { json },
            }),
            Err(why) => errors.push(WindowError { path: json, why }),
        }
    }
    (marks, errors)
}

/// (first start, last end) and the number of events of the window at `path`, opened by
/// the rule every file of a dump is read by (a FIFO or a link to `/dev/zero` in its
/// place is an error, not a hang).
pub fn window_span(path: &Path) -> Result<(Option<(u64, u64)>, u64), String> {
    let (file, _) = cupmon_files::open_regular(path).map_err(|e| e.problem())?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 20, file));
    let mut acc = Span::default();
    de.deserialize_map(Top(&mut acc))
        .map_err(|e| e.to_string())?;
    let span = (acc.first <= acc.last).then_some((acc.first, acc.last));
    Ok((span, acc.events))
}

use serde::Deserializer as _;

struct Span {
    first: u64,
    last: u64,
    events: u64,
}

impl Default for Span {
    fn default() -> Self {
        Self {
            first: u64::MAX,
            last: 0,
            events: 0,
        }
    }
}

#[derive(Deserialize)]
struct EventTimes {
    start_ns: Option<u64>,
    end_ns: Option<u64>,
}

struct Top<'a>(&'a mut Span);

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a trace window object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "events" {
                map.next_value_seed(Events(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Events<'a>(&'a mut Span);

impl<'de> DeserializeSeed<'de> for Events<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Events<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(e) = seq.next_element::<EventTimes>()? {
            self.0.events += 1;
            let start = e.start_ns.filter(|&s| s > 0);
            let end = e.end_ns.filter(|&t| t > 0).or(start);
            if let (Some(s), Some(t)) = (start, end) {
                self.0.first = self.0.first.min(s);
                self.0.last = self.0.last.max(t.max(s));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_come_from_the_events_and_bad_files_are_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("window-0.json"),
            r#"{"extra_activities":[1],"events":[{"kind":"kernel","start_ns":200,"end_ns":300,"name":"k"},
               {"kind":"external_correlation","correlation_id":3},
               {"kind":"cuda_runtime","start_ns":150,"end_ns":160,"args":{"x":[1,2]}}],"start_ns":0}"#,
        )
        .expect("write");
        std::fs::write(dir.path().join("window-0.trace.json.gz"), b"x").expect("write");
        std::fs::write(dir.path().join("window-2.json"), b"{\"events\": [").expect("write");
        std::fs::write(dir.path().join("window-x.json"), b"{}").expect("write");
        let (marks, errors) = find_windows(dir.path());
        assert_eq!(marks.len(), 1);
        assert_eq!(marks[0].span, Some((150, 300)));
        assert_eq!(marks[0].events, 3);
        assert!(marks[0].file.ends_with("window-0.trace.json.gz"));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].path.ends_with("window-2.json"), "{}", errors[0]);
    }
}
