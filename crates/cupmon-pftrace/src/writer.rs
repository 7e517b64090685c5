//! The streaming writer and its tracks (the events on them: `events.rs`).
//! What it keeps grows with the number of distinct names and tracks, not with
//! the number of events.

use std::io::Write;

use rustc_hash::FxHashMap;

use crate::descriptor::{self, CounterUnit};
use crate::error::PftraceError;
use crate::event::{PftraceSummary, WriterOptions};
use crate::intern::Tables;
use crate::lanes::Lanes;
use crate::packets::Packets;
use crate::reorder::Reorder;

mod events;

/// A track that slices and instants go on (process, thread, named track).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TrackId(u32);

/// A counter track.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CounterTrackId(u32);

#[derive(Debug)]
struct Track {
    name: Box<str>,
    /// Process labels (empty for other tracks), to see whether a later
    /// description changes anything.
    labels: Vec<Box<str>>,
    sort_index: i32,
    /// `lane_uuids[0]` is the track's own uuid; the others its overlap tracks.
    lane_uuids: Vec<u64>,
    lanes: Lanes,
    reorder: Reorder,
}

/// Writes a Perfetto trace (`Trace` of length-delimited `TracePacket`s) to
/// `W`. Call [`PftraceWriter::finish`]: a writer dropped without it loses
/// the slices it still holds back and the unflushed buffer.
#[derive(Debug)]
pub struct PftraceWriter<W: Write> {
    p: Packets<W>,
    opts: WriterOptions,
    tables: Tables,
    tracks: Vec<Track>,
    counter_uuids: Vec<u64>,
    processes: FxHashMap<i32, TrackId>,
    threads: FxHashMap<(i32, i64), TrackId>,
    next_uuid: u64,
    arrivals: u64,
    /// Emptied bodies of released slices, reused for new ones.
    spare: Vec<Vec<u8>>,
    summary: PftraceSummary,
}

impl<W: Write> PftraceWriter<W> {
    pub fn new(sink: W) -> Result<Self, PftraceError> {
        Self::with_options(sink, WriterOptions::default())
    }

    /// Starts the trace: the REALTIME clock (see `Packets::preamble`), and
    /// the root track that asks for processes and threads in sort-index order.
    pub fn with_options(sink: W, opts: WriterOptions) -> Result<Self, PftraceError> {
        if opts.sequence_id == 0 {
            return Err(PftraceError::ZeroSequenceId);
        }
        let mut w = Self {
            p: Packets::new(sink, opts.sequence_id),
            tables: Tables::new(opts.intern_cap),
            opts,
            tracks: Vec::new(),
            counter_uuids: Vec::new(),
            processes: FxHashMap::default(),
            threads: FxHashMap::default(),
            next_uuid: 0,
            arrivals: 0,
            spare: Vec::new(),
            summary: PftraceSummary::default(),
        };
        let now = w.opts.realtime_now_ns.unwrap_or_else(realtime_now_ns);
        w.p.preamble(now, &w.opts.extra_clocks);
        let at = w.p.open(None);
        descriptor::root(&mut w.p.out);
        w.p.close(at, &mut w.tables.pending)?;
        Ok(w)
    }

    /// A process (the Chrome trace's `process_name`, `process_labels`,
    /// `process_sort_index`); declared once per pid. A later call with
    /// other values describes it again (same uuid: Perfetto takes the last
    /// description), for traces whose names come after their events.
    pub fn process(
        &mut self,
        pid: i32,
        name: &str,
        labels: &[&str],
        sort_index: i32,
    ) -> Result<TrackId, PftraceError> {
        let known = self.processes.get(&pid).copied();
        let id = self.describe(known, name, labels, sort_index, |out, uuid| {
            descriptor::process(out, uuid, pid, name, labels, sort_index);
        })?;
        self.processes.insert(pid, id);
        Ok(id)
    }

    /// A thread of `pid` (or a GPU stream of a device, as the Chrome trace
    /// has them); declared once per (pid, tid), described again when a later
    /// call gives another name or sort index.
    pub fn thread(
        &mut self,
        pid: i32,
        tid: i64,
        name: &str,
        sort_index: i32,
    ) -> Result<TrackId, PftraceError> {
        let known = self.threads.get(&(pid, tid)).copied();
        let id = self.describe(known, name, &[], sort_index, |out, uuid| {
            descriptor::thread(out, uuid, pid, tid, name, sort_index);
        })?;
        self.threads.insert((pid, tid), id);
        Ok(id)
    }

    /// Declares a track (`known` None) or describes it again when its name,
    /// labels or sort index change; `emit` writes its descriptor.
    fn describe(
        &mut self,
        known: Option<TrackId>,
        name: &str,
        labels: &[&str],
        sort_index: i32,
        emit: impl FnOnce(&mut Vec<u8>, u64),
    ) -> Result<TrackId, PftraceError> {
        if let Some(id) = known {
            let t = &self.tracks[id.0 as usize];
            let same_labels = t.labels.len() == labels.len()
                && t.labels.iter().zip(labels).all(|(a, b)| &**a == *b);
            if &*t.name == name && same_labels && t.sort_index == sort_index {
                return Ok(id);
            }
        }
        let uuid = match known {
            Some(id) => self.tracks[id.0 as usize].lane_uuids[0],
            None => self.new_uuid(),
        };
        let at = self.p.open(None);
        emit(&mut self.p.out, uuid);
        self.p.close(at, &mut self.tables.pending)?;
        let id = known.unwrap_or_else(|| self.add_track(uuid, name, sort_index));
        let t = &mut self.tracks[id.0 as usize];
        t.name = name.into();
        t.sort_index = sort_index;
        t.labels = labels.iter().map(|&l| l.into()).collect();
        Ok(id)
    }

    /// A named track: under `parent`, or at the top (global instants).
    pub fn track(
        &mut self,
        parent: Option<TrackId>,
        name: &str,
        sort_index: i32,
    ) -> Result<TrackId, PftraceError> {
        let parent = parent
            .map(|p| self.track_ref(p).map(|t| t.lane_uuids[0]))
            .transpose()?;
        let uuid = self.new_uuid();
        let at = self.p.open(None);
        descriptor::named(&mut self.p.out, uuid, parent, name, sort_index);
        self.p.close(at, &mut self.tables.pending)?;
        Ok(self.add_track(uuid, name, sort_index))
    }

    /// A counter track (memory in use, ...), under `parent` or at the top.
    pub fn counter_track(
        &mut self,
        parent: Option<TrackId>,
        name: &str,
        unit: CounterUnit<'_>,
    ) -> Result<CounterTrackId, PftraceError> {
        let parent = parent
            .map(|p| self.track_ref(p).map(|t| t.lane_uuids[0]))
            .transpose()?;
        let uuid = self.new_uuid();
        let at = self.p.open(None);
        descriptor::counter(&mut self.p.out, uuid, parent, name, unit);
        self.p.close(at, &mut self.tables.pending)?;
        self.counter_uuids.push(uuid);
        self.summary.tracks += 1;
        Ok(CounterTrackId(self.counter_uuids.len() as u32 - 1))
    }

    /// Writes the slices still held back, flushes, and returns the sink.
    pub fn finish(mut self) -> Result<(W, PftraceSummary), PftraceError> {
        for index in 0..self.tracks.len() {
            while let Some(p) = self.tracks[index].reorder.pop() {
                self.release(index, p)?;
            }
        }
        if !self.tables.pending.is_empty() {
            let at = self.p.open(None);
            self.p.close(at, &mut self.tables.pending)?;
        }
        self.summary.packets = self.p.packets;
        self.summary.bytes = self.p.bytes_after_flush()?;
        let t = &self.tables;
        self.summary.interned = [
            t.names.len(),
            t.categories.len(),
            t.arg_names.len(),
            t.string_values.len(),
        ]
        .map(|n| n as u64);
        self.summary.inline_strings =
            t.names.inline + t.categories.inline + t.arg_names.inline + t.string_values.inline;
        Ok((self.p.into_sink(), self.summary))
    }

    fn new_uuid(&mut self) -> u64 {
        self.next_uuid += 1;
        self.opts.uuid_base.wrapping_add(self.next_uuid)
    }

    fn add_track(&mut self, uuid: u64, name: &str, sort_index: i32) -> TrackId {
        self.tracks.push(Track {
            name: name.into(),
            labels: Vec::new(),
            sort_index,
            lane_uuids: vec![uuid],
            lanes: Lanes::new(self.opts.max_lanes),
            reorder: Reorder::default(),
        });
        self.summary.tracks += 1;
        TrackId(self.tracks.len() as u32 - 1)
    }

    fn track_index(&self, track: TrackId) -> Result<usize, PftraceError> {
        let index = track.0 as usize;
        if index < self.tracks.len() {
            Ok(index)
        } else {
            Err(PftraceError::UnknownTrack {
                what: "track",
                index: track.0,
                count: self.tracks.len(),
            })
        }
    }

    fn track_ref(&self, track: TrackId) -> Result<&Track, PftraceError> {
        self.track_index(track).map(|i| &self.tracks[i])
    }
}

fn realtime_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
