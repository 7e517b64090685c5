//! Typed trace events ([`crate::event`]) into Perfetto track events, one at a
//! time, with the meaning Perfetto's own JSON importer gives the same events in
//! Chrome JSON: `X` (and `B`/`E`) are
//! slices on their thread's track, `i`/`I` instants on the thread's, the
//! process's or the global track, `C` one counter track per series, `s`/`t`/
//! `f` flows bound to the slice that encloses them, `M` names and sort
//! indices. Times are µs from the trace's base time in the JSON and absolute
//! ns (CLOCK_REALTIME) in Perfetto: `round(µs * 1000)` recovers cupmon's ns
//! exactly (its µs are the nearest double to ns / 1000).

use std::io::Write;

use cupmon_pftrace::{Instant, PftraceError, PftraceWriter, Slice, TrackId};
use rustc_hash::FxHashMap;

use super::args::{JsonArgs, TypedArgs};
use super::tracks::Tracks;
use super::PftraceStats;
use crate::event::{Args, FlowEnd, Id, Phase, Scope, TraceEvent};
use crate::json::value::Value;

mod records;

/// A `B` event waiting for its `E`.
#[derive(Debug)]
struct Begun {
    ts: u64,
    name: String,
    cat: String,
    args: Vec<u8>,
}

/// The last slice read, held until the next event: Chrome traces put a
/// slice's flow events right after it (the `s` after a launch, the `f` after
/// its kernel), and they are attached before the slice goes to the writer,
/// which may place (and write) a slice that arrives out of time order at once.
#[derive(Debug, Default)]
struct Held {
    track: Option<TrackId>,
    ts: u64,
    dur: u64,
    name: String,
    cat: String,
    args: Option<Vec<u8>>,
    starts: Vec<u64>,
    ends: Vec<u64>,
}

/// Why an event was not converted (counted, and said by the caller).
#[derive(Debug)]
pub(super) struct Skip(pub String);

#[derive(Debug)]
pub(super) struct Converter<W: Write> {
    pub w: PftraceWriter<W>,
    tracks: Tracks,
    base_ns: i128,
    pub stats: PftraceStats,
    /// Flow ends without `"bp": "e"`: they bind to the next slice of their track.
    next_slice_flows: FxHashMap<TrackId, Vec<u64>>,
    begun: FxHashMap<TrackId, Vec<Begun>>,
    held: Held,
    /// The top-level members other than `traceEvents`, for the metadata bundle.
    members: Vec<(String, Vec<u8>)>,
}

/// A Chrome flow's id as a Perfetto flow id. Perfetto keys v1 flows by
/// (category, name, id); cupmon's `ac2g` arrows keep their correlation id,
/// the others get a hash of all three with the top bit set, so the two never
/// meet.
fn flow_id(cat: &str, name: &str, id: &Id<'_>) -> u64 {
    if let (("ac2g", "ac2g"), Id::Int(i)) = ((cat, name), id) {
        if let Ok(v) = u64::try_from(*i) {
            if v != 0 && v < 1 << 63 {
                return v;
            }
        }
    }
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    (cat, name).hash(&mut h);
    match id {
        Id::Int(i) => i.hash(&mut h),
        Id::Text(t) => t.hash(&mut h),
    }
    h.finish() | 1 << 63
}

impl<W: Write> Converter<W> {
    pub fn new(w: PftraceWriter<W>, base_ns: i128) -> Self {
        Self {
            w,
            tracks: Tracks::default(),
            base_ns,
            stats: PftraceStats::default(),
            next_slice_flows: FxHashMap::default(),
            begun: FxHashMap::default(),
            held: Held::default(),
            members: Vec::new(),
        }
    }

    /// µs after the base time as absolute ns.
    fn ts_ns(&self, us: Option<f64>) -> Result<u64, Skip> {
        let us = us.ok_or_else(|| Skip("no ts".into()))?;
        let rel = (us * 1000.0).round();
        if !rel.is_finite() || rel.abs() > 9.2e18 {
            return Err(Skip("ts out of range".into()));
        }
        u64::try_from(self.base_ns + rel as i128).map_err(|_| Skip("ts out of range".into()))
    }

    fn dur_ns(us: Option<f64>) -> Result<u64, Skip> {
        let us = us.ok_or_else(|| Skip("X without dur".into()))?;
        let ns = (us * 1000.0).round();
        if !(0.0..1.8e19).contains(&ns) {
            return Err(Skip("X with a negative or unreadable dur".into()));
        }
        Ok(ns as u64)
    }

    /// A top-level member of the trace (its value's text).
    pub fn member(&mut self, key: String, raw: &[u8]) -> Result<(), String> {
        if key == "baseTimeNanoseconds" {
            if let Some(Value::Int(b)) = crate::json::read::parse_document(raw) {
                if b != self.base_ns {
                    return Err(format!(
                        "baseTimeNanoseconds is {b} but the events were converted against {}",
                        self.base_ns
                    ));
                }
            }
        }
        self.members.push((key, raw.to_vec()));
        Ok(())
    }

    /// One event of the trace.
    pub fn event(&mut self, e: &TraceEvent<'_>) -> Result<(), PftraceError> {
        match self.convert(e) {
            Ok(()) => Ok(()),
            Err(Outcome::Skip(Skip(why))) => {
                self.stats.skip(&why);
                Ok(())
            }
            Err(Outcome::Fail(err)) => Err(err),
        }
    }

    fn convert(&mut self, e: &TraceEvent<'_>) -> Result<(), Outcome> {
        let (name, cat) = (&*e.name, &*e.cat);
        let is_flow = matches!(e.ph, Phase::FlowStart | Phase::FlowStep | Phase::FlowEnd);
        // Anything but a flow event lets the held slice go (a flow event may
        // belong to it).
        if !is_flow {
            self.release_held()?;
        }
        match &e.ph {
            Phase::Complete => {
                let (ts, dur) = (self.ts_ns(e.ts)?, Self::dur_ns(e.dur)?);
                let track = self
                    .tracks
                    .thread(&mut self.w, e.pid.as_ref(), e.tid.as_ref())?;
                match e.args {
                    Args::Json(args) => self.slice(track, ts, dur, name, cat, Some(args), e)?,
                    Args::None if e.flow.is_none() => {
                        self.slice(track, ts, dur, name, cat, None, e)?
                    }
                    _ => self.typed_slice(track, ts, dur, e)?,
                }
            }
            Phase::Begin => {
                let ts = self.ts_ns(e.ts)?;
                let track = self
                    .tracks
                    .thread(&mut self.w, e.pid.as_ref(), e.tid.as_ref())?;
                let args = match e.args {
                    Args::Json(a) => a,
                    _ => b"{}",
                };
                self.begun.entry(track).or_default().push(Begun {
                    ts,
                    name: name.to_owned(),
                    cat: cat.to_owned(),
                    args: args.to_vec(),
                });
            }
            Phase::End => {
                let ts = self.ts_ns(e.ts)?;
                let track = self
                    .tracks
                    .thread(&mut self.w, e.pid.as_ref(), e.tid.as_ref())?;
                let b = self
                    .begun
                    .get_mut(&track)
                    .and_then(Vec::pop)
                    .ok_or_else(|| Skip("E without its B".into()))?;
                let dur = ts.saturating_sub(b.ts);
                self.slice(track, b.ts, dur, &b.name, &b.cat, Some(&b.args), e)?;
            }
            Phase::Instant => {
                let ts = self.ts_ns(e.ts)?;
                let track = match e.scope {
                    Scope::Global => self.tracks.global(&mut self.w)?,
                    Scope::Process => self.tracks.process(&mut self.w, e.pid.as_ref())?,
                    Scope::Thread => {
                        self.tracks
                            .thread(&mut self.w, e.pid.as_ref(), e.tid.as_ref())?
                    }
                };
                let args = (!matches!(e.args, Args::None)).then_some(TypedArgs(e.args));
                let instant = Instant {
                    category: cat,
                    more_args: args.as_ref().map(|a| a as _),
                    ..Instant::new(ts, name)
                };
                self.w.instant(track, &instant)?;
                self.stats.instants += 1;
            }
            Phase::Counter => self.counter(e, name)?,
            Phase::FlowStart | Phase::FlowStep | Phase::FlowEnd => {
                let id =
                    e.id.as_ref()
                        .ok_or_else(|| Skip("flow without id".into()))?;
                let ts = self.ts_ns(e.ts)?;
                let track = self
                    .tracks
                    .thread(&mut self.w, e.pid.as_ref(), e.tid.as_ref())?;
                let flow = flow_id(cat, name, id);
                let is_end = e.ph == Phase::FlowEnd;
                if is_end && !e.binds_enclosing {
                    self.next_slice_flows.entry(track).or_default().push(flow);
                    return Ok(());
                }
                let h = &self.held;
                let end = h.ts.saturating_add(h.dur);
                // The held slice takes the flow when it is the innermost slice
                // open at `ts`, as in Perfetto: not when an earlier one that
                // starts with it or later is inside it (slices that start
                // together, the shorter first).
                if h.track == Some(track)
                    && h.ts <= ts
                    && ts <= end
                    && !self.w.held_slice_inside(track, ts, h.ts, end)?
                {
                    let h = &mut self.held;
                    if is_end { &mut h.ends } else { &mut h.starts }.push(flow);
                    self.stats.flow_events_bound += 1;
                    return Ok(());
                }
                self.release_held()?;
                self.bind_flow(track, ts, flow, is_end)?;
            }
            Phase::Metadata => self.meta(e, name)?,
            Phase::Other(ph) if ph.is_empty() => return Err(Skip("no ph".into()).into()),
            Phase::Other(other) => return Err(Skip(format!("phase {other:?}")).into()),
        }
        Ok(())
    }

    /// A flow event bound to the innermost slice of `track` enclosing `ts`.
    fn bind_flow(
        &mut self,
        track: TrackId,
        ts: u64,
        flow: u64,
        is_end: bool,
    ) -> Result<(), PftraceError> {
        if self.w.bind_flow(track, ts, flow, is_end)? {
            self.stats.flow_events_bound += 1;
        } else {
            self.stats.flow_events_unbound += 1;
        }
        Ok(())
    }

    /// A slice of the writers' own (typed args, its arrow): written at once, its
    /// arrow bound as the Chrome JSON's flow event right after it would be.
    fn typed_slice(
        &mut self,
        track: TrackId,
        ts: u64,
        dur: u64,
        e: &TraceEvent<'_>,
    ) -> Result<(), Outcome> {
        let mut starts = Vec::new();
        let mut ends = self.next_slice_flows.remove(&track).unwrap_or_default();
        self.stats.flow_events_bound += ends.len() as u64;
        let mut unbound = None;
        if let Some((corr, end)) = e.flow {
            let flow = flow_id("ac2g", "ac2g", &Id::Int(corr));
            let slice_end = ts.saturating_add(dur);
            if self.w.held_slice_inside(track, ts, ts, slice_end)? {
                unbound = Some((flow, end == FlowEnd::Finish));
            } else {
                if end == FlowEnd::Finish {
                    &mut ends
                } else {
                    &mut starts
                }
                .push(flow);
                self.stats.flow_events_bound += 1;
            }
        }
        let args = TypedArgs(e.args);
        let slice = Slice {
            category: &e.cat,
            more_args: (!matches!(e.args, Args::None)).then_some(&args as _),
            flow_ids: &starts,
            terminating_flow_ids: &ends,
            ..Slice::new(ts, dur, &e.name)
        };
        self.w.slice(track, &slice)?;
        self.stats.slices += 1;
        if let Some((flow, is_end)) = unbound {
            self.bind_flow(track, ts, flow, is_end)?;
        }
        Ok(())
    }

    /// Holds a slice (see [`Held`]), with the flows waiting for it.
    #[allow(clippy::too_many_arguments)]
    fn slice(
        &mut self,
        track: TrackId,
        ts: u64,
        dur: u64,
        name: &str,
        cat: &str,
        args: Option<&[u8]>,
        e: &TraceEvent<'_>,
    ) -> Result<(), Outcome> {
        self.release_held()?;
        let h = &mut self.held;
        h.starts.clear();
        h.ends.clear();
        if let Some(waiting) = self.next_slice_flows.remove(&track) {
            self.stats.flow_events_bound += waiting.len() as u64;
            h.ends.extend(waiting);
        }
        if let Some(id) = &e.bind_id {
            let flow = flow_id("", "", id);
            if e.flow_out {
                h.starts.push(flow);
            } else if e.flow_in {
                h.ends.push(flow);
            }
        }
        h.name.clear();
        h.name.push_str(name);
        h.cat.clear();
        h.cat.push_str(cat);
        match (args, &mut h.args) {
            (Some(a), Some(buf)) => {
                buf.clear();
                buf.extend_from_slice(a);
            }
            (Some(a), none) => *none = Some(a.to_vec()),
            (None, Some(buf)) => buf.clear(),
            (None, None) => {}
        }
        h.ts = ts;
        h.dur = dur;
        h.track = Some(track);
        Ok(())
    }

    /// Writes the held slice, if any.
    fn release_held(&mut self) -> Result<(), PftraceError> {
        let h = &mut self.held;
        let Some(track) = h.track.take() else {
            return Ok(());
        };
        // An empty buffer is "no args" (an `args` value is never empty text).
        let args = h.args.as_deref().filter(|a| !a.is_empty()).map(JsonArgs);
        let slice = Slice {
            category: &h.cat,
            more_args: args.as_ref().map(|a| a as _),
            flow_ids: &h.starts,
            terminating_flow_ids: &h.ends,
            ..Slice::new(h.ts, h.dur, &h.name)
        };
        self.w.slice(track, &slice)?;
        self.stats.slices += 1;
        Ok(())
    }

    /// Writes what is left: B events without an E are counted, flows waiting
    /// for a slice that never came are counted, the top-level members become
    /// the metadata bundle.
    pub fn finish(mut self) -> Result<(W, PftraceStats), PftraceError> {
        self.release_held()?;
        let open: usize = self.begun.values().map(Vec::len).sum();
        for _ in 0..open {
            self.stats.skip("B without its E");
        }
        self.stats.flow_events_unbound += self
            .next_slice_flows
            .values()
            .map(|v| v.len() as u64)
            .sum::<u64>();
        self.metadata_bundle()?;
        let (sink, summary) = self.w.finish()?;
        self.stats.bytes = summary.bytes;
        self.stats.overlap_tracks = summary.overlap_tracks;
        self.stats.overlap_slices = summary.overlap_slices;
        self.stats.forced_slices = summary.forced_slices;
        Ok((sink, self.stats))
    }
}

/// An event that is skipped, or a write that failed.
#[derive(Debug)]
pub(super) enum Outcome {
    Skip(Skip),
    Fail(PftraceError),
}

impl From<Skip> for Outcome {
    fn from(s: Skip) -> Self {
        Outcome::Skip(s)
    }
}

impl From<PftraceError> for Outcome {
    fn from(e: PftraceError) -> Self {
        Outcome::Fail(e)
    }
}
