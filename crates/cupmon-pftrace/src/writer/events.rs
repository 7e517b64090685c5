//! What goes on the tracks: slices (held back per track for ordering, then
//! placed on a lane), instants, counter values, flows bound to held slices.

use std::io::Write;

use super::PftraceWriter;
use crate::error::PftraceError;
use crate::event::{CounterValue, Instant, Slice};
use crate::fields::{packet, track_event as te};
use crate::metadata::{self, MetadataValue};
use crate::reorder::Pending;
use crate::track_event::{check_flows, encode_event, write_flows};
use crate::writer::{CounterTrackId, TrackId};
use crate::{descriptor, wire};

impl<W: Write> PftraceWriter<W> {
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

    /// Whether [`Self::bind_flow`] at `ts_ns` would find a slice on `track`
    /// inside one from `start_ns` to `end_ns` that is still to come (one
    /// that starts later, or with it and ends sooner): for a caller holding
    /// that slice back, to know which of the two is the innermost.
    pub fn held_slice_inside(
        &self,
        track: TrackId,
        ts_ns: u64,
        start_ns: u64,
        end_ns: u64,
    ) -> Result<bool, PftraceError> {
        let index = self.track_index(track)?;
        Ok(self.tracks[index]
            .reorder
            .inner_enclosing(ts_ns, start_ns, end_ns))
    }

    /// A Chrome trace's top-level members (`traceName`, `deviceProperties`,
    /// ...) as one `ChromeEventBundle` (see [`crate::metadata`]). Call it
    /// once: each further bundle's names get a number.
    pub fn chrome_metadata(
        &mut self,
        entries: &[(&str, MetadataValue<'_>)],
    ) -> Result<(), PftraceError> {
        let at = self.p.open(None);
        metadata::bundle(&mut self.p.out, entries);
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

    /// Places a slice on a lane and writes its BEGIN and END packets.
    pub(super) fn release(&mut self, index: usize, p: Pending) -> Result<(), PftraceError> {
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
}
