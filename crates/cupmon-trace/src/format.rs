//! What an output's name says it holds. The formats themselves are
//! [`cupmon_records::TraceFormat`] (one list for every layer), chosen by the
//! output's name unless asked for.

use std::path::Path;

pub use cupmon_records::{is_pftrace_path, TraceFormat};

/// What an output's name says it holds, by its ending (any case): what a
/// command writes when no format is given, and what a given one is checked
/// against (`cupmon decode -o x.trace.json.gz` must not write a trace window,
/// which Perfetto cannot open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputName {
    /// `.pftrace`, `.pftrace.gz`: a trace in Perfetto's protobuf format.
    Pftrace,
    /// `.trace.json`, `.trace.json.gz`: a Chrome JSON trace.
    ChromeTrace,
    /// `.json`, `.json.gz` whose file name has `window` in it
    /// (`window-0.json`, `slow.window.json`): a trace window.
    Window,
    /// Any other `.json`, `.json.gz`: JSON, a window or a trace.
    Json,
    /// Anything else, `-` (standard output) included: the name says nothing.
    Other,
}

impl OutputName {
    pub fn of(path: &Path) -> Self {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let json = name.strip_suffix(".gz").unwrap_or(&name);
        if is_pftrace_path(Path::new(&name)) {
            OutputName::Pftrace
        } else if json.ends_with(".trace.json") {
            OutputName::ChromeTrace
        } else if json.ends_with(".json") && json.contains("window") {
            OutputName::Window
        } else if json.ends_with(".json") {
            OutputName::Json
        } else {
            OutputName::Other
        }
    }

    /// What the name says, for messages (`None`: it says nothing that binds).
    pub fn says(self) -> Option<&'static str> {
        match self {
            OutputName::Pftrace => Some("a trace in Perfetto's protobuf format (.pftrace)"),
            OutputName::ChromeTrace => Some("a Chrome JSON trace (.trace.json)"),
            OutputName::Window => Some("a trace window (window in a .json name)"),
            OutputName::Json => Some("JSON (.json)"),
            OutputName::Other => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_name_says_what_it_holds() {
        let of = |p: &str| OutputName::of(Path::new(p));
        assert_eq!(of("x.trace.json.gz"), OutputName::ChromeTrace);
        assert_eq!(of("dir/x.TRACE.JSON"), OutputName::ChromeTrace);
        assert_eq!(of("x.pftrace.gz"), OutputName::Pftrace);
        assert_eq!(of("window-0.json"), OutputName::Window);
        assert_eq!(of("slow.window.json.gz"), OutputName::Window);
        assert_eq!(of("window-0.trace.json.gz"), OutputName::ChromeTrace);
        assert_eq!(of("gpu.json"), OutputName::Json);
        assert_eq!(of("windows/gpu.bin"), OutputName::Other);
        assert_eq!(of("-"), OutputName::Other);
    }
}
