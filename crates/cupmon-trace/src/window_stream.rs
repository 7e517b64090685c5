//! A dump, or a slice of it, written as a trace window while it is read: each record
//! becomes its window event and goes to the output at once, so memory does not grow
//! with the dump. The bytes are those of [`crate::decode_slice_to_window`]'s window
//! serialised whole: the events in the same order, then the same trailing fields.

use std::collections::HashSet;
use std::io::Write;

use cupmon_records::{
    DecodeProgress, DecodeReport, Dump, KernelNames, Reorder, SliceWalk, TimeRange,
};

use crate::from_records::{note_annotation, off_clock_events, window_shell};
use crate::{OffClockEvents, TraceError, WindowEvent};

/// What [`write_window_stream`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamedWindow {
    pub events: u64,
    pub report: DecodeReport,
}

/// Write the window of the records of `dump` overlapping `range` (all of them when
/// both ends are open) to `out`, as `serde_json` writes the [`crate::TraceWindow`] of
/// [`crate::decode_slice_to_window`]. Without events it writes the empty window only
/// if `write_if_empty` (an empty slice is the caller's error to report, with no
/// output). External correlations join their records within `reorder`
/// ([`SliceWalk`]).
pub fn write_window_stream(
    dump: &Dump,
    range: &TimeRange,
    reorder: Reorder,
    out: &mut dyn Write,
    write_if_empty: bool,
    mut progress: impl FnMut(&DecodeProgress),
) -> Result<StreamedWindow, TraceError> {
    let mut walk = SliceWalk::open(dump, range, reorder)?;
    let mut names = KernelNames::new(dump.kernel_names());
    let mut annotated: HashSet<u64> = HashSet::new();
    let mut events = 0u64;
    // A buffer's events are serialised here, then written in one call.
    let mut text = Vec::with_capacity(1 << 20);
    let mut failed = None;
    let mut off_clock = Vec::new();
    loop {
        let more = walk.next_buffer_with(|w| {
            note_annotation(w.record, &mut annotated);
            let event = WindowEvent::from_record(w.record, &mut names);
            // Nothing is written before the first event: an empty slice leaves no output.
            text.extend_from_slice(if events == 0 { b"{\"events\":[" } else { b"," });
            if let Err(e) = serde_json::to_writer(&mut text, &event) {
                failed.get_or_insert(e);
            }
            events += 1;
        })?;
        if let Some(e) = failed.take() {
            return Err(std::io::Error::from(e).into());
        }
        out.write_all(&text)?;
        text.clear();
        off_clock_events(&walk, &mut names, &mut off_clock);
        if !more {
            break;
        }
        progress(&walk.progress());
    }
    let mut report = walk.finish();
    report.unresolved_kernel_names = names.unresolved();
    if events > 0 || write_if_empty {
        let mut shell = window_shell(dump, range, &mut report, &annotated)?;
        shell.off_clock = OffClockEvents::of(off_clock);
        let text = serde_json::to_vec(&shell).map_err(std::io::Error::from)?;
        if events == 0 {
            out.write_all(&text)?;
        } else {
            // `{"events":[]` then the other fields: close the array written above instead.
            let rest = text
                .strip_prefix(b"{\"events\":[]")
                .expect("a window serialises its events first");
            out.write_all(b"]")?;
            out.write_all(rest)?;
        }
    }
    Ok(StreamedWindow { events, report })
}
