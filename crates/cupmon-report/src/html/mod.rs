//! The page: a head with the inlined style and a Content-Security-Policy that allows
//! nothing from outside (no network at view time, by construction), the header, the
//! chart area (drawn by the inlined script from the embedded JSON), the tables
//! (written here, so they read without the script) and the hint.

mod chart_data;
mod hang;
mod header;
mod ranks;
mod source_lines;
mod stragglers;
mod tables;
mod text;

use std::io::{self, Write};
use std::path::Path;

pub use tables::KERNEL_NAME_CHARS;
pub use text::iso_utc;

use crate::Report;

const STYLE: &str = include_str!("../../assets/report.css");
const SCRIPT: &str = include_str!("../../assets/report.js");

/// Write the page of `report`; links to trace files are relative to `page_dir` (the
/// absolute directory the page is written to).
pub fn write_html(report: &Report, page_dir: &Path, out: &mut impl Write) -> io::Result<()> {
    let title = format!("cupmon report: {}", report.target);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style></head>\n<body>\n",
        text::esc(&title)
    )?;
    header::write(out, report)?;
    hang::write(out, report)?;
    ranks::hint(out, report)?;
    writeln!(
        out,
        "<section id=\"timeline\"><h2>Over time</h2>\
         <p class=\"note\">Bins of {}; drag across a chart to zoom all of them, double-click \
         to zoom out. Busy %: the union of the device's kernel intervals over the bin \
         (as <code>cupmon stats --timeline</code>). Times are local.</p>\
         <div id=\"charts\"><noscript>The charts need JavaScript.</noscript></div></section>",
        cupmon_config::units::format_duration(std::time::Duration::from_nanos(report.grid.bin_ns))
    )?;
    tables::windows(out, report, page_dir)?;
    tables::kernels(out, report)?;
    tables::ranges(out, report)?;
    source_lines::write(out, report)?;
    tables::copies(out, report)?;
    tables::streams(out, report)?;
    ranks::ranks(out, report)?;
    stragglers::write(out, report)?;
    tables::warnings(out, report)?;
    writeln!(
        out,
        "<footer>cupmon {} &middot; {} bins, {} processes</footer>",
        env!("CARGO_PKG_VERSION"),
        report.grid.bins(),
        report.processes.len()
    )?;
    writeln!(
        out,
        "<script type=\"application/json\" id=\"report-data\">{}</script>",
        chart_data::chart_json(report, page_dir)
    )?;
    writeln!(out, "<script>{SCRIPT}</script>\n</body></html>")
}
