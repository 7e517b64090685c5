//! The streaming writer: tracks, and the events on them. What it keeps grows
//! with the number of distinct names and tracks, not with the number of
//! events.

use std::io::Write;

use rustc_hash::FxHashMap;

use crate::descriptor::{self, CounterUnit};
use crate::error::PftraceError;
use crate::event::{CounterValue, Instant, MetadataValue, PftraceSummary, Slice, WriterOptions};
use crate::fields::{chrome, packet, track_event as te};
use crate::intern::Tables;
use crate::lanes::Lanes;
use crate::packets::Packets;
use crate::reorder::{Pending, Reorder};
use crate::track_event::{check_flows, encode_event, write_flows};
use crate::wire;

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
        descriptor::process(&mut self.p.out, uuid, pid, name, labels, sort_index);
        self.p.close(at, &mut self.tables.pending)?;
        let id = match known {
            Some(id) => {
                let t = &mut self.tracks[id.0 as usize];
                t.name = name.into();
                t.sort_index = sort_index;
                id
            }
            None => self.add_track(uuid, name, sort_index),
        };
        self.tracks[id.0 as usize].labels = labels.iter().map(|&l| l.into()).collect();
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
        if let Some(id) = known {
            let t = &self.tracks[id.0 as usize];
            if &*t.name == name && t.sort_index == sort_index {
                return Ok(id);
            }
        }
        let uuid = match known {
            Some(id) => self.tracks[id.0 as usize].lane_uuids[0],
            None => self.new_uuid(),
        };
        let at = self.p.open(None);
        descriptor::thread(&mut self.p.out, uuid, pid, tid, name, sort_index);
        self.p.close(at, &mut self.tables.pending)?;
        let id = match known {
            Some(id) => {
                let t = &mut self.tracks[id.0 as usize];
                t.name = name.into();
                t.sort_index = sort_index;
                id
            }
            None => self.add_track(uuid, name, sort_index),
        };
        self.threads.insert((pid, tid), id);
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

    /// A slice on `track`, or on one of its overlap tracks when it overlaps
    /// an earlier slice there without nesting in it.
    pub fn slice(&mut self, track: TrackId, s: &Slice<'_>) -> Result<(), PftraceError> {
        let index = self.track_index(track)?;
        let end = s
            .ts_ns
            .checked_add(s.dur_ns)
            .ok_or_else(|| PftraceError::EndOverflow {
                name: s.name.to_owned(),
                ts_ns: s.ts_ns,
                dur_ns: s.dur_ns,
            })?;
        check_flows(s.name, s.flow_ids, s.terminating_flow_ids)?;
        let mut body = self.spare.pop().unwrap_or_default();
        body.clear();
        encode_event(
            &mut body,
            &mut self.tables,
            te::TYPE_SLICE_BEGIN,
            s.name,
            s.category,
            s.args,
            s.more_args,
        );
        write_flows(&mut body, s.flow_ids, s.terminating_flow_ids);
        let seq = self.arrivals;
        self.arrivals += 1;
        let t = &mut self.tracks[index];
        t.reorder.push(Pending {
            start: s.ts_ns,
            end,
            seq,
            body,
        });
        if t.reorder.len() > self.opts.reorder_window {
            let p = t.reorder.pop().expect("the window holds a slice");
            self.release(index, p)?;
        }
        Ok(())
    }

    /// An instant on `track` (thread-, process- or globally scoped by the
    /// track it is on).
    pub fn instant(&mut self, track: TrackId, i: &Instant<'_>) -> Result<(), PftraceError> {
        let uuid = self.track_ref(track)?.lane_uuids[0];
        let at = self.p.open(Some(i.ts_ns));
        let ev = wire::begin(&mut self.p.out, packet::TRACK_EVENT);
        encode_event(
            &mut self.p.out,
            &mut self.tables,
            te::TYPE_INSTANT,
            i.name,
            i.category,
            i.args,
            i.more_args,
        );
        wire::uint(&mut self.p.out, te::TRACK_UUID, uuid);
        wire::end(&mut self.p.out, ev);
        self.p.close(at, &mut self.tables.pending)?;
        self.summary.instants += 1;
        Ok(())
    }

    /// Attaches a flow to the slice on `track` that encloses `ts_ns` (the
    /// innermost one still held back for ordering): what a Chrome trace's
    /// separate flow events (`s`, `t`, `f` with `"bp": "e"`) mean. The flow
    /// starts or passes there (`terminating` false) or ends there. False
    /// when no held slice encloses `ts_ns` (the flow is not written).
    pub fn bind_flow(
        &mut self,
        track: TrackId,
        ts_ns: u64,
        flow_id: u64,
        terminating: bool,
    ) -> Result<bool, PftraceError> {
        let index = self.track_index(track)?;
        let Some(p) = self.tracks[index].reorder.enclosing_mut(ts_ns) else {
            return Ok(false);
        };
        if flow_id == 0 {
            return Err(PftraceError::ZeroFlowId {
                name: format!("flow at {ts_ns} ns"),
            });
        }
        // A repeated field may come anywhere in its message: append it.
        let (out, ends) = if terminating {
            (&[][..], &[flow_id][..])
        } else {
            (&[flow_id][..], &[][..])
        };
        write_flows(&mut p.body, out, ends);
        Ok(true)
    }

    /// A Chrome trace's top-level members (`traceName`, `deviceProperties`,
    /// ...) as one `ChromeEventBundle` of `ChromeMetadata`: trace processor
    /// keeps them in its metadata table as `cr-NAME`. Call it once: each
    /// further bundle's names get a number.
    pub fn chrome_metadata(
        &mut self,
        entries: &[(&str, MetadataValue<'_>)],
    ) -> Result<(), PftraceError> {
        let at = self.p.open(None);
        let bundle = wire::begin(&mut self.p.out, packet::CHROME_EVENTS);
        for (name, value) in entries {
            let m = wire::begin(&mut self.p.out, chrome::METADATA);
            wire::bytes(&mut self.p.out, chrome::NAME, name.as_bytes());
            match *value {
                MetadataValue::Str(s) => {
                    wire::bytes(&mut self.p.out, chrome::STRING_VALUE, s.as_bytes())
                }
                MetadataValue::Int(v) => wire::int(&mut self.p.out, chrome::INT_VALUE, v),
                MetadataValue::Bool(v) => {
                    wire::uint(&mut self.p.out, chrome::BOOL_VALUE, u64::from(v))
                }
                MetadataValue::Json(t) => {
                    wire::bytes(&mut self.p.out, chrome::JSON_VALUE, t.as_bytes())
                }
            }
            wire::end(&mut self.p.out, m);
        }
        wire::end(&mut self.p.out, bundle);
        self.p.close(at, &mut self.tables.pending)
    }

    /// A counter's value from `ts_ns` on.
    pub fn counter(
        &mut self,
        track: CounterTrackId,
        ts_ns: u64,
        value: impl Into<CounterValue>,
    ) -> Result<(), PftraceError> {
        let uuid = *self
            .counter_uuids
            .get(track.0 as usize)
            .ok_or(PftraceError::UnknownTrack {
                what: "counter track",
                index: track.0,
                count: self.counter_uuids.len(),
            })?;
        let at = self.p.open(Some(ts_ns));
        let ev = wire::begin(&mut self.p.out, packet::TRACK_EVENT);
        wire::uint(&mut self.p.out, te::TYPE, te::TYPE_COUNTER);
        wire::uint(&mut self.p.out, te::TRACK_UUID, uuid);
        match value.into() {
            CounterValue::Int(v) => wire::int(&mut self.p.out, te::COUNTER_VALUE, v),
            CounterValue::Double(v) => wire::double(&mut self.p.out, te::DOUBLE_COUNTER_VALUE, v),
        }
        wire::end(&mut self.p.out, ev);
        self.p.close(at, &mut self.tables.pending)?;
        self.summary.counter_values += 1;
        Ok(())
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

    /// Places a slice on a lane and writes its BEGIN and END packets.
    fn release(&mut self, index: usize, p: Pending) -> Result<(), PftraceError> {
        let placed = self.tracks[index].lanes.place(p.start, p.end);
        let uuid = self.lane_uuid(index, placed.lane)?;
        let at = self.p.open(Some(p.start));
        let ev = wire::begin(&mut self.p.out, packet::TRACK_EVENT);
        self.p.out.extend_from_slice(&p.body);
        wire::uint(&mut self.p.out, te::TRACK_UUID, uuid);
        wire::end(&mut self.p.out, ev);
        self.p.close(at, &mut self.tables.pending)?;
        let at = self.p.open(Some(p.end));
        let ev = wire::begin(&mut self.p.out, packet::TRACK_EVENT);
        wire::uint(&mut self.p.out, te::TYPE, te::TYPE_SLICE_END);
        wire::uint(&mut self.p.out, te::TRACK_UUID, uuid);
        wire::end(&mut self.p.out, ev);
        self.p.close(at, &mut self.tables.pending)?;
        self.summary.slices += 1;
        self.summary.overlap_slices += u64::from(placed.lane > 0);
        self.summary.forced_slices += u64::from(placed.forced);
        if self.spare.len() < 1024 {
            self.spare.push(p.body);
        }
        Ok(())
    }

    /// The uuid of lane `lane` of a track, declaring its overlap track the
    /// first time (named after the track: "stream 7 (overlap)", "(overlap 2)").
    fn lane_uuid(&mut self, index: usize, lane: usize) -> Result<u64, PftraceError> {
        if let Some(&uuid) = self.tracks[index].lane_uuids.get(lane) {
            return Ok(uuid);
        }
        let uuid = self.new_uuid();
        let t = &self.tracks[index];
        let name = match lane {
            1 => format!("{} (overlap)", t.name.trim_end()),
            n => format!("{} (overlap {n})", t.name.trim_end()),
        };
        let (parent, sort) = (t.lane_uuids[0], t.sort_index);
        let at = self.p.open(None);
        descriptor::named(&mut self.p.out, uuid, Some(parent), &name, sort);
        self.p.close(at, &mut self.tables.pending)?;
        self.tracks[index].lane_uuids.push(uuid);
        self.summary.overlap_tracks += 1;
        Ok(uuid)
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
