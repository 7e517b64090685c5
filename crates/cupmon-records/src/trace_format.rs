//! The formats a trace is written in: Kineto's Chrome JSON, and Perfetto's
//! protobuf trace (`.pftrace`). The one list of them, for every layer that names
//! one: the `trace_format` setting and the window trace files of a dump
//! directory, the trace writers, the command line and the Python package.

use std::path::Path;

/// The format of a written trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// Chrome JSON as Kineto writes it (`.json`, `.json.gz`).
    #[default]
    Json,
    /// Perfetto `TracePacket`s (`.pftrace`, `.pftrace.gz`): the same events.
    Pftrace,
}

impl TraceFormat {
    /// Every format, in the order help texts list them.
    pub const ALL: [TraceFormat; 2] = [TraceFormat::Json, TraceFormat::Pftrace];

    /// `explicit` when given, else what `path`'s name says: [`TraceFormat::Pftrace`]
    /// for names ending in `.pftrace` or `.pftrace.gz`, JSON otherwise.
    pub fn resolve(explicit: Option<TraceFormat>, path: &Path) -> Self {
        explicit.unwrap_or(if is_pftrace_path(path) {
            TraceFormat::Pftrace
        } else {
            TraceFormat::Json
        })
    }

    /// Its name (`json`, `pftrace`), or another name for it (`chrome`,
    /// `perfetto`), any case.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|f| f.name() == text || f.alias() == text)
    }

    /// The name settings, flags and Python keywords use.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Json => "json",
            TraceFormat::Pftrace => "pftrace",
        }
    }

    /// The other name [`TraceFormat::parse`] takes.
    fn alias(self) -> &'static str {
        match self {
            TraceFormat::Json => "chrome",
            TraceFormat::Pftrace => "perfetto",
        }
    }

    /// What it is, for help texts.
    pub fn describe(self) -> &'static str {
        match self {
            TraceFormat::Json => "Chrome JSON, as Kineto writes it",
            TraceFormat::Pftrace => {
                "Perfetto's protobuf trace (TracePackets), with the same events"
            }
        }
    }

    /// The trace file of window `n` in a dump directory (beside `window-N.json`).
    pub fn window_trace_file(self, n: u32) -> String {
        match self {
            TraceFormat::Json => format!("window-{n}.trace.json.gz"),
            TraceFormat::Pftrace => format!("window-{n}.trace.pftrace"),
        }
    }
}

/// Whether `path` names a Perfetto protobuf trace (`.pftrace`, `.pftrace.gz`).
pub fn is_pftrace_path(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".pftrace") || name.ends_with(".pftrace.gz")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_decides_unless_the_format_is_given() {
        let of = |explicit, p: &str| TraceFormat::resolve(explicit, Path::new(p));
        assert_eq!(of(None, "t.pftrace"), TraceFormat::Pftrace);
        assert_eq!(of(None, "dir/t.pftrace.gz"), TraceFormat::Pftrace);
        assert_eq!(of(None, "t.json.gz"), TraceFormat::Json);
        assert_eq!(of(None, "t.pftrace.json"), TraceFormat::Json);
        assert_eq!(of(None, "-"), TraceFormat::Json);
        assert_eq!(of(Some(TraceFormat::Pftrace), "-"), TraceFormat::Pftrace);
        assert_eq!(of(Some(TraceFormat::Json), "t.pftrace"), TraceFormat::Json);
    }

    #[test]
    fn every_format_parses_by_its_names_and_names_its_window_file() {
        assert_eq!(TraceFormat::parse(" Perfetto"), Some(TraceFormat::Pftrace));
        assert_eq!(TraceFormat::parse("chrome"), Some(TraceFormat::Json));
        assert_eq!(TraceFormat::parse("proto"), None);
        for f in TraceFormat::ALL {
            assert_eq!(TraceFormat::parse(f.name()), Some(f));
            let file = f.window_trace_file(3);
            assert!(file.starts_with("window-3.trace."), "{file}");
            assert_eq!(TraceFormat::resolve(None, Path::new(&file)), f, "{file}");
        }
    }
}
