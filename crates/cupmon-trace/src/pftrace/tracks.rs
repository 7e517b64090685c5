//! The tracks of the converted trace, keyed as the Chrome trace keys them:
//! a process per `pid`, a thread per (`pid`, `tid`), named by the `M` events
//! (`process_name`, `process_labels`, `process_sort_index`, `thread_name`,
//! `thread_sort_index`) wherever in the trace they come.
//!
//! Perfetto's descriptors hold 32-bit pids and tids. A JSON pid or tid that
//! is a string (`"Spans"`), or an integer past 32 bits (cupmon's overlap
//! tracks are `stream + k << 32`), gets a pid or tid of its own from the
//! bottom of the int32 range, where no real one is (JSON ids are OS pids and
//! tids, device and stream numbers, cupmon's -1 for overhead), and is named by
//! its string, as Perfetto's JSON importer names such processes and threads.

use std::io::Write;

use cupmon_pftrace::{CounterTrackId, CounterUnit, PftraceError, PftraceWriter, TrackId};
use rustc_hash::FxHashMap;

use crate::event::Id;

/// Pids and tids given to JSON ids that do not fit 32 bits count up from here.
pub(crate) const SYNTHETIC_BASE: i64 = i32::MIN as i64;

/// A JSON pid or tid as a map key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Int(i128),
    Text(Box<str>),
}

fn key(id: Option<&Id<'_>>) -> Key {
    match id {
        // Perfetto's JSON importer reads a missing pid or tid as 0.
        None => Key::Int(0),
        Some(Id::Int(i)) => Key::Int(*i),
        Some(Id::Text(t)) => Key::Text((**t).into()),
    }
}

fn clamp_i32(v: i128) -> i32 {
    v.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32
}

#[derive(Debug)]
struct Process {
    pid: i32,
    name: String,
    label: Option<String>,
    sort: i32,
    track: Option<TrackId>,
}

#[derive(Debug)]
struct Thread {
    pid: i32,
    tid: i64,
    name: String,
    sort: i32,
    track: Option<TrackId>,
}

/// A change that an `M` event makes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Meta<'a> {
    ProcessName(&'a str),
    ProcessLabel(&'a str),
    ProcessSort(i128),
    ThreadName(&'a str),
    ThreadSort(i128),
}

#[derive(Debug, Default)]
pub(super) struct Tracks {
    processes: FxHashMap<Key, Process>,
    threads: FxHashMap<(Key, Key), Thread>,
    counters: FxHashMap<(Key, String), CounterTrackId>,
    global: Option<TrackId>,
    next_synthetic: i64,
}

impl Tracks {
    fn synthetic(&mut self) -> i64 {
        self.next_synthetic += 1;
        SYNTHETIC_BASE + self.next_synthetic
    }

    fn process_entry(&mut self, pid: &Key) -> &mut Process {
        if !self.processes.contains_key(pid) {
            let (num, name) = match pid {
                Key::Int(i) if i32::try_from(*i).is_ok() => (*i as i32, String::new()),
                Key::Int(i) => (self.synthetic() as i32, i.to_string()),
                Key::Text(t) => (self.synthetic() as i32, t.to_string()),
            };
            let sort = match pid {
                Key::Int(i) => clamp_i32(*i),
                // After the real processes, as Perfetto shows "Spans" and "Traces".
                Key::Text(_) => i32::MAX,
            };
            self.processes.insert(
                pid.clone(),
                Process {
                    pid: num,
                    name,
                    label: None,
                    // Kineto's own rule: a process sorts by its pid.
                    sort,
                    track: None,
                },
            );
        }
        self.processes.get_mut(pid).expect("inserted above")
    }

    /// The process track of `pid`, declared (or described again) now.
    fn declare_process<W: Write>(
        &mut self,
        w: &mut PftraceWriter<W>,
        pid: &Key,
    ) -> Result<TrackId, PftraceError> {
        let p = self.process_entry(pid);
        let labels: Vec<&str> = p.label.iter().map(String::as_str).collect();
        let track = w.process(p.pid, &p.name, &labels, p.sort)?;
        p.track = Some(track);
        Ok(track)
    }

    /// The track of `pid`'s process (for process-scoped instants and counters).
    pub fn process<W: Write>(
        &mut self,
        w: &mut PftraceWriter<W>,
        pid: Option<&Id<'_>>,
    ) -> Result<TrackId, PftraceError> {
        let pid = key(pid);
        match self.processes.get(&pid).and_then(|p| p.track) {
            Some(t) => Ok(t),
            None => self.declare_process(w, &pid),
        }
    }

    fn thread_entry(&mut self, pid: &Key, tid: &Key) -> &mut Thread {
        let k = (pid.clone(), tid.clone());
        if !self.threads.contains_key(&k) {
            let process = self.process_entry(pid).pid;
            let (num, name) = match tid {
                Key::Int(i) if i32::try_from(*i).is_ok() => (*i as i64, String::new()),
                Key::Int(_) => (self.synthetic(), String::new()),
                Key::Text(t) => (self.synthetic(), t.to_string()),
            };
            let sort = match tid {
                Key::Int(i) => clamp_i32(*i),
                Key::Text(_) => i32::MAX,
            };
            self.threads.insert(
                k.clone(),
                Thread {
                    pid: process,
                    tid: num,
                    name,
                    sort,
                    track: None,
                },
            );
        }
        self.threads.get_mut(&k).expect("inserted above")
    }

    fn declare_thread<W: Write>(
        &mut self,
        w: &mut PftraceWriter<W>,
        pid: &Key,
        tid: &Key,
    ) -> Result<TrackId, PftraceError> {
        if self.processes.get(pid).and_then(|p| p.track).is_none() {
            self.declare_process(w, pid)?;
        }
        let t = self.thread_entry(pid, tid);
        let track = w.thread(t.pid, t.tid, &t.name, t.sort)?;
        t.track = Some(track);
        Ok(track)
    }

    /// The track of thread (`pid`, `tid`): slices, flows, thread instants.
    pub fn thread<W: Write>(
        &mut self,
        w: &mut PftraceWriter<W>,
        pid: Option<&Id<'_>>,
        tid: Option<&Id<'_>>,
    ) -> Result<TrackId, PftraceError> {
        let (pid, tid) = (key(pid), key(tid));
        // The common case first, without cloning the keys.
        if let Some(track) = self
            .threads
            .get(&(pid.clone(), tid.clone()))
            .and_then(|t| t.track)
        {
            return Ok(track);
        }
        self.declare_thread(w, &pid, &tid)
    }

    /// An `M` event: the name, label or sort index of a process or thread,
    /// described (again) at once.
    pub fn meta<W: Write>(
        &mut self,
        w: &mut PftraceWriter<W>,
        pid: Option<&Id<'_>>,
        tid: Option<&Id<'_>>,
        meta: Meta<'_>,
    ) -> Result<(), PftraceError> {
        let (pid, tid) = (key(pid), key(tid));
        match meta {
            Meta::ProcessName(n) => self.process_entry(&pid).name = n.to_owned(),
            Meta::ProcessLabel(l) => self.process_entry(&pid).label = Some(l.to_owned()),
            Meta::ProcessSort(s) => self.process_entry(&pid).sort = clamp_i32(s),
            Meta::ThreadName(n) => self.thread_entry(&pid, &tid).name = n.to_owned(),
            Meta::ThreadSort(s) => self.thread_entry(&pid, &tid).sort = clamp_i32(s),
        }
        match meta {
            Meta::ThreadName(_) | Meta::ThreadSort(_) => {
                self.declare_thread(w, &pid, &tid)?;
            }
            _ => {
                self.declare_process(w, &pid)?;
            }
        }
        Ok(())
    }

    /// The top-level track of globally scoped instants.
    pub fn global<W: Write>(&mut self, w: &mut PftraceWriter<W>) -> Result<TrackId, PftraceError> {
        if let Some(t) = self.global {
            return Ok(t);
        }
        let t = w.track(None, "Global instants", 0)?;
        self.global = Some(t);
        Ok(t)
    }

    /// The counter track `name` of `pid`'s process (named as Perfetto names
    /// a JSON counter's series: "NAME SERIES").
    pub fn counter<W: Write>(
        &mut self,
        w: &mut PftraceWriter<W>,
        pid: Option<&Id<'_>>,
        name: &str,
    ) -> Result<CounterTrackId, PftraceError> {
        let k = (key(pid), name.to_owned());
        if let Some(&c) = self.counters.get(&k) {
            return Ok(c);
        }
        let parent = self.process(w, pid)?;
        let c = w.counter_track(Some(parent), name, CounterUnit::Unspecified)?;
        self.counters.insert(k, c);
        Ok(c)
    }
}
