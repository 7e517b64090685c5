//! The hang section: `cupmon diagnose`'s verdict when a dump holds hang records.

use std::io::{self, Write};

use super::text::esc;
use crate::Report;

pub fn write(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let Some(d) = &report.hang else {
        return Ok(());
    };
    let mut text = Vec::new();
    cupmon_hang::diagnose::write_text(&mut text, d)?;
    writeln!(
        out,
        "<section id=\"hang\"><h2>Hang</h2><p><strong>{}</strong></p>\
         <p class=\"note\">From the hang records (hang-N.json) and every rank's records, as \
         <code>cupmon diagnose</code> gives it.</p><pre>{}</pre></section>",
        esc(&d.headline),
        esc(&String::from_utf8_lossy(&text))
    )
}
