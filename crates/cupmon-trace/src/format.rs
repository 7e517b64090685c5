//! The two formats a trace is written in: Kineto's Chrome JSON, and Perfetto's
//! protobuf trace (`.pftrace`), chosen by the output's name unless asked for.

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
    /// `explicit` when given, else what `path`'s name says: [`TraceFormat::Pftrace`]
    /// for names ending in `.pftrace` or `.pftrace.gz`, JSON otherwise.
    pub fn resolve(explicit: Option<TraceFormat>, path: &Path) -> Self {
        explicit.unwrap_or(if is_pftrace_path(path) {
            TraceFormat::Pftrace
        } else {
            TraceFormat::Json
        })
    }

    /// `json` (also `chrome`) or `pftrace` (also `perfetto`), any case.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "json" | "chrome" => Some(TraceFormat::Json),
            "pftrace" | "perfetto" => Some(TraceFormat::Pftrace),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Json => "json",
            TraceFormat::Pftrace => "pftrace",
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
        assert_eq!(TraceFormat::parse(" Perfetto"), Some(TraceFormat::Pftrace));
        assert_eq!(TraceFormat::parse("chrome"), Some(TraceFormat::Json));
        assert_eq!(TraceFormat::parse("proto"), None);
    }
}
