//! A dump, or a slice of it, exported as a trace of its own without holding its
//! events: what [`crate::export_window`] writes for the window
//! [`crate::decode_slice_to_window`] gives, byte for byte, as long as the records
//! that join lie within the reorder window of each other (`lookahead.rs`).
//!
//! Two passes over the dump. The survey reads every record for what comes before
//! the first event (the metadata: devices, streams, threads, overlap tracks; the base
//! time; the decode's counts for the `cupmon` block). The write pass converts each
//! record to its events and writes them at once, its joins made by a lookahead walk.
//! Memory: a few buffers of records, the joins of one reorder window, the
//! annotation spans (one per annotation, device and stream) and the metadata sets.

use std::collections::HashSet;
use std::io::{self, Cursor, Read};
use std::path::Path;

use cupmon_records::{
    DecodeProgress, DecodeReport, Dump, KernelNames, Reorder, SliceWalk, TimeRange,
};

use super::complete::{Complete, OverlapTrack};
use super::cpu_scan::scan_cpu_trace;
use super::entries::{Entries, EventsWritten, Joined};
use super::lookahead::{Lanes, Lookahead};
use super::survey::Survey;
use super::untimed::is_untimed;
use super::window_input::{MergeEvent, MergeWindow};
use super::{
    default_base_ns, name_output, trimester_floor_ns, write_merged, MergeStats, WindowPart,
    DEFAULT_MAX_EVENT_BYTES,
};
use crate::event::EventSink;
use crate::export::{export_doc, ExportOptions};
use crate::from_records::{note_annotation, window_shell};
use crate::{AtomicOutput, TraceError, TraceFormat, WindowEvent};

/// What [`DumpExport::write`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpExportStats {
    pub merge: MergeStats,
    /// External correlations the write pass let go before their time (the reorder
    /// window was full): some events may lack their `External id` or annotation.
    pub joins_evicted: u64,
}

/// A dump surveyed for export; [`DumpExport::write`] writes the trace.
#[derive(Debug)]
pub struct DumpExport<'d> {
    dump: &'d Dump,
    range: TimeRange,
    reorder: Reorder,
    exact: bool,
    /// The window without its events (annotations, `cupmon` block, GPUs, rank).
    window: MergeWindow,
    survey: Survey,
    tracks: Vec<OverlapTrack>,
    buffers: u64,
    report: DecodeReport,
    late_lanes: u64,
}

impl<'d> DumpExport<'d> {
    /// The survey pass over the records of `dump` in `range`; `exact`: PyTorch's
    /// output exactly (no complete-trace extras).
    pub fn survey(
        dump: &'d Dump,
        range: &TimeRange,
        reorder: Reorder,
        exact: bool,
        mut progress: impl FnMut(&DecodeProgress),
    ) -> Result<Self, TraceError> {
        let lanes = if exact { Lanes::Off } else { Lanes::Tracks };
        let mut look = Lookahead::open(dump, range, reorder, None, lanes, false)?;
        let mut names = KernelNames::new(dump.kernel_names());
        let mut annotated: HashSet<u64> = HashSet::new();
        let plain = MergeWindow::default();
        let threads = Entries::without_events(&plain, 0, Survey::default(), None);
        let mut survey = Survey::default();
        let mut off_clock = Vec::new();
        loop {
            let more = look.read_buffer(|w| {
                note_annotation(&w.record, &mut annotated);
                let event = MergeEvent::from(&WindowEvent::from_record(&w.record, &mut names));
                survey.add(&event, |a| threads.thread_id(a), !exact);
            })?;
            off_clock.extend(look.off_clock_records().iter().map(|w| {
                super::off_clock::to_value(&WindowEvent::from_record(&w.record, &mut names))
            }));
            if !more {
                break;
            }
            progress(&look.progress());
        }
        let tracks = look.lanes.tracks();
        let late_lanes = look.lanes.late + look.lanes.forced;
        let mut report = look.finish();
        report.unresolved_kernel_names = names.unresolved();
        let mut window = MergeWindow::from(&window_shell(dump, range, &mut report, &annotated)?);
        window.off_clock = off_clock;
        Ok(Self {
            dump,
            range: *range,
            reorder,
            exact,
            window,
            survey,
            tracks,
            buffers: report.chunks,
            report,
            late_lanes,
        })
    }

    /// Give the trace a rank (`distributedInfo`), over what the dump says.
    pub fn set_rank(&mut self, rank: i64, world_size: Option<i64>) {
        self.window.set_rank(rank, world_size);
    }

    /// Events the trace's window holds (one per record).
    pub fn events(&self) -> usize {
        self.survey.events
    }

    /// The decode's counts and warnings (from the survey).
    pub fn report(&self) -> &DecodeReport {
        &self.report
    }

    /// GPU ops whose overlap lane was placed out of order (read later than the
    /// reorder window allows, or pushed out of a full one).
    pub fn late_lanes(&self) -> u64 {
        self.late_lanes
    }

    /// Write the trace to `output` (`.gz` by name) in `format` (`None`: by the name,
    /// see [`crate::MergeOptions::format`]), whole or not at all.
    pub fn write(
        self,
        output: &Path,
        trace_name: Option<String>,
        format: Option<TraceFormat>,
        mut progress: impl FnMut(&DecodeProgress),
    ) -> Result<DumpExportStats, TraceError> {
        if self.survey.events == 0 {
            return Err(TraceError::Window(
                "the window holds no events: nothing to export".to_owned(),
            ));
        }
        let base_ns = self
            .survey
            .first_start_ns
            .map_or_else(default_base_ns, trimester_floor_ns);
        let options = ExportOptions {
            trace_name: trace_name.clone(),
            device_properties_json: None,
            exact: self.exact,
            format,
        };
        let doc = export_doc(&self.window, &options, base_ns);
        let scan = scan_cpu_trace(Cursor::new(&doc), DEFAULT_MAX_EVENT_BYTES, &mut |_| {})
            .map_err(|_| TraceError::Window("the exported trace's head does not parse".into()))?;
        let open = || -> io::Result<Box<dyn Read>> { Ok(Box::new(Cursor::new(doc.clone()))) };
        let complete = (!self.exact).then(|| {
            let props = self.window.device_properties.clone().or_else(|| {
                scan.members
                    .iter()
                    .find(|m| m.key == "deviceProperties")
                    .and_then(|m| m.raw_value.as_ref())
                    .map(|v| String::from_utf8_lossy(v).into_owned())
            });
            Complete::streamed(props.as_deref(), self.tracks.clone())
                .with_python_stacks(Some(self.dump.python_stacks().clone()))
        });
        let events = self.survey.events;
        let entries = Entries::without_events(&self.window, base_ns, self.survey, complete);
        let mut part = Streamed {
            entries: &entries,
            dump: self.dump,
            range: self.range,
            reorder: self.reorder,
            buffers: self.buffers,
            complete: !self.exact,
            progress: &mut progress,
            joins_evicted: 0,
        };
        let trace_name = trace_name
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| output.display().to_string());
        let out = AtomicOutput::create(output)?;
        let mut writer = out.trace_writer(TraceFormat::resolve(format, output), base_ns)?;
        let mut stats = write_merged(
            &mut writer,
            &scan,
            &mut part,
            &open,
            &trace_name,
            (&self.window, events),
            self.exact,
        )
        .map_err(|e| name_output(e, output))?;
        stats.pftrace = out.commit_trace(writer)?;
        Ok(DumpExportStats {
            merge: stats,
            joins_evicted: part.joins_evicted,
        })
    }
}

/// The write pass: see the module docs.
struct Streamed<'a, 'd, P> {
    entries: &'a Entries<'a>,
    dump: &'d Dump,
    range: TimeRange,
    reorder: Reorder,
    /// The buffers the survey read: a dump still being written may have more now.
    buffers: u64,
    complete: bool,
    progress: &'a mut P,
    joins_evicted: u64,
}

impl<P: FnMut(&DecodeProgress)> WindowPart for Streamed<'_, '_, P> {
    fn write_metadata(&mut self, sink: &mut dyn EventSink) -> Result<(), TraceError> {
        self.entries.write_metadata(sink)
    }

    fn write_events(&mut self, sink: &mut dyn EventSink) -> Result<EventsWritten, TraceError> {
        let entries = self.entries;
        let lanes = if self.complete {
            Lanes::Each
        } else {
            Lanes::Off
        };
        let limit = Some(self.buffers);
        let mut lead = Lookahead::open(self.dump, &self.range, self.reorder, limit, lanes, true)?;
        let mut walk =
            SliceWalk::open(self.dump, &self.range, self.reorder)?.with_limit(self.buffers);
        let mut names = KernelNames::new(self.dump.kernel_names());
        let mut state = entries.new_state();
        let mut index = 0usize;
        while walk.next_buffer()?.is_some() {
            lead.advance(walk.buffers_read(), walk.stamp())?;
            for w in walk.records() {
                let event = MergeEvent::from(&WindowEvent::from_record(&w.record, &mut names));
                let mut joined = Joined::default();
                let annotations = entries.has_annotations();
                let named = |e| entries.names_annotation(e);
                match &event {
                    MergeEvent::Api(a) if self.complete => {
                        joined.cpu_op = lead.joined(a.correlation_id, w.stamp, false, named).0;
                    }
                    // Left out (`untimed.rs`): it has no lane to wait for.
                    MergeEvent::Gpu(g) if self.complete && is_untimed(g) => {}
                    MergeEvent::Gpu(g) => {
                        let (cpu_op, annotation) =
                            lead.joined(g.correlation_id, w.stamp, annotations, named);
                        if self.complete {
                            joined.cpu_op = cpu_op;
                            joined.lane = lead.lane(index)?;
                        }
                        joined.annotation = annotation;
                    }
                    _ => {}
                }
                entries.write_event(sink, &event, joined, &mut state)?;
                index += 1;
            }
            lead.expire(walk.stamp());
            (self.progress)(&walk.progress());
        }
        entries.write_spans(sink, &mut state)?;
        self.joins_evicted = lead.evicted_early();
        Ok(state.into())
    }
}
