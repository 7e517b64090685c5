//! The worker thread: everything that is too slow for CUPTI's callbacks.
//! For each completed buffer it writes new kernel names, then the buffer as a
//! CUPMRBUF chunk, counts its records, keeps them for an open trace window,
//! and returns the buffer to the pool.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use cupmon_cupti::CompletedBuffer;
use cupmon_records::dump::{BufferWritten, FrameIndex};
use cupmon_records::{
    ActivityKind, BufferCompletion, DumpError, DumpWriter, KernelNames, Layout, Record, RecordIter,
};
use cupmon_window::WindowEvent;

use crate::launch_stacks::StackJoin;
use crate::msg::{Msg, WindowEvents};
use crate::shared::Shared;
use crate::worker_profile::WriteTimer;

pub(crate) struct Worker {
    shared: &'static Shared,
    dump: DumpWriter,
    seen_names: HashSet<u64>,
    window: Option<Vec<Record>>,
    /// The first write error; writing stops after it (the disk is full or gone).
    write_error: Option<String>,
    /// Records per CUPTI kind number (kinds are small numbers).
    by_kind: [u64; 64],
    warned_layout: bool,
    warned_budget: bool,
    born: Instant,
    /// Per stream: the last operations and those running (for hang records).
    streams: cupmon_hang::StreamTracker,
    /// Launches joined to their Python stacks.
    stacks: StackJoin,
}

impl Worker {
    pub fn new(shared: &'static Shared, dump: DumpWriter) -> Self {
        Self {
            shared,
            seen_names: HashSet::new(),
            window: None,
            write_error: None,
            by_kind: [0; 64],
            warned_layout: false,
            warned_budget: false,
            born: Instant::now(),
            streams: cupmon_hang::StreamTracker::new(),
            stacks: StackJoin::default(),
            dump,
        }
    }

    pub fn run(mut self, rx: Receiver<Msg>) {
        self.shared.pool.refill();
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Buffer {
                    buffer,
                    cupti_ns,
                    unix_ns,
                } => self.on_buffer(buffer, cupti_ns, unix_ns),
                Msg::Refill => self.shared.pool.refill(),
                Msg::Barrier(reply) => {
                    let _ = reply.send(());
                }
                Msg::WindowStart => self.window = Some(Vec::new()),
                Msg::WindowEnd(reply) => {
                    let records = self.window.take().unwrap_or_default();
                    let _ = reply.send(self.window_events(records));
                }
                Msg::HangRecord {
                    trigger,
                    detail,
                    reply,
                } => {
                    let _ = reply.send(self.hang_record(trigger, detail));
                }
                Msg::Stop(reply) => {
                    let result = self.finish();
                    let _ = reply.send(result);
                    return;
                }
            }
        }
    }

    /// The window's records as events, their timestamps in Unix ns: records stamped by
    /// another client's clock are converted with the samples of that clock, or left out
    /// (with a warning) when there are too few to convert them.
    fn window_events(&self, records: Vec<Record>) -> WindowEvents {
        let mut names = KernelNames::new(self.dump.kernel_names());
        let clock = self.shared.clock.fit();
        let mut out = WindowEvents::default();
        for mut record in records {
            if record.has_foreign_timestamp() {
                let Some(clock) = clock else {
                    out.off_clock += 1;
                    continue;
                };
                record.map_timestamps(&|t| clock.to_unix(t));
                out.converted += 1;
            }
            out.events
                .push(WindowEvent::from_record(&record, &mut names));
        }
        out
    }

    fn on_buffer(&mut self, buffer: CompletedBuffer, cupti_ns: u64, unix_ns: u64) {
        let busy_since = Instant::now();
        let shared = self.shared;
        let counters = &shared.counters;
        counters.add(&counters.dropped_by_cupti, buffer.dropped());
        // Names first (a chunk's kernels all have names, and the digest classifies
        // NCCL's kernels by name); counting gives the buffer's time index and digest,
        // which its frame and segment carry.
        let names = self.write_names(&buffer);
        self.note_write_error(names);
        let read_since = Instant::now();
        let completed_before = self.streams.completed();
        let end_before = self.streams.last_end();
        let (layout, index) = self.count_records(&buffer);
        counters.worker.note_read(read_since);
        if self.streams.completed() > completed_before {
            // When the work ended, not when its buffer came back: a forced flush hands
            // back operations that ended long ago, and they are no new progress.
            // (Records on another client's clock: their delivery time.)
            let ended = self.streams.last_end();
            let at = if ended > end_before { ended } else { unix_ns };
            shared.progress.last_ns.fetch_max(at, Ordering::Relaxed);
        }
        let written = self.write(&buffer, cupti_ns, unix_ns, layout, &index);
        self.note_write_error(written);
        if self.write_error.is_none() {
            let stacks = self.stacks.write(&mut self.dump);
            self.note_write_error(stacks);
        }
        let observer = shared
            .observer
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(observer) = observer {
            observer.on_buffer(buffer.bytes(), buffer.cupti_version());
        }
        counters.add(&counters.buffers_completed, 1);
        shared.pool.give_back(buffer.into_buffer());
        shared.pool.refill();
        counters.worker.note_buffer(busy_since, self.born);
    }

    /// Writes a hang record from the streams as they are now and the threads' state.
    fn hang_record(
        &self,
        trigger: cupmon_hang::Trigger,
        detail: String,
    ) -> Result<std::path::PathBuf, String> {
        let clock = self.shared.clock.fit();
        let names = self.dump.kernel_names();
        let streams = self
            .streams
            .view(names, &|t| clock.as_ref().map(|c| c.to_unix(t)));
        let last_end = Some(self.streams.last_end()).filter(|&t| t > 0);
        let snapshot = crate::hang_watch::snapshot(self.shared, trigger, detail, streams, last_end);
        let record = cupmon_hang::assemble(snapshot, &crate::hang_watch::resolve);
        cupmon_hang::write_hang_record(self.dump.dir(), &record).map_err(|e| e.to_string())
    }

    fn note_write_error(&mut self, result: Result<(), DumpError>) {
        if let Err(e) = result {
            if self.write_error.is_none() {
                cupmon_log::error!(
                    "cannot write the dump in {}: {e}; recording continues in memory only",
                    self.dump.dir().display()
                );
                self.write_error = Some(e.to_string());
            }
        }
    }

    /// The buffer's chunk, flushed after its names were (see [`Worker::write_names`]):
    /// a process killed at any point leaves complete chunks whose kernels all have
    /// names.
    fn write(
        &mut self,
        buffer: &CompletedBuffer,
        cupti_ns: u64,
        unix_ns: u64,
        layout: Option<Layout>,
        index: &FrameIndex,
    ) -> Result<(), DumpError> {
        if self.write_error.is_some() {
            return Ok(());
        }
        let timer = WriteTimer::start();
        let result = self.write_chunk(buffer, cupti_ns, unix_ns, layout, index);
        self.shared.counters.worker.note_write(timer);
        result
    }

    /// The kernel names the buffer brings, flushed.
    fn write_names(&mut self, buffer: &CompletedBuffer) -> Result<(), DumpError> {
        if self.write_error.is_some() {
            return Ok(());
        }
        let seen = &mut self.seen_names;
        // Consecutive kernels mostly share a name: skip the set for repeats.
        let mut last = 0;
        let names: Vec<(u64, String)> = buffer
            .kernel_names(|ptr| {
                let new = ptr != last && seen.insert(ptr);
                last = ptr;
                new
            })
            .collect();
        if !names.is_empty() {
            for (ptr, name) in &names {
                self.dump.add_kernel_name(*ptr, name)?;
            }
            self.dump.flush()?;
            let counters = &self.shared.counters;
            counters.add(&counters.kernel_names, names.len() as u64);
        }
        Ok(())
    }

    fn write_chunk(
        &mut self,
        buffer: &CompletedBuffer,
        cupti_ns: u64,
        unix_ns: u64,
        layout: Option<Layout>,
        index: &FrameIndex,
    ) -> Result<(), DumpError> {
        let completion = BufferCompletion {
            stream_id: buffer.stream_id(),
            context: buffer.context(),
            cupti_completed_ns: cupti_ns,
            unix_completed_ns: unix_ns,
        };
        let behind = self.behind();
        let written = self
            .dump
            .write_buffer(completion, buffer.bytes(), layout, index, behind)?;
        let counters = &self.shared.counters;
        match written {
            BufferWritten::Written { bytes, retired, .. } => {
                self.dump.flush()?;
                counters.add(&counters.bytes_written, bytes);
                counters.add(&counters.buffer_bytes, buffer.bytes().len() as u64);
                if behind {
                    counters.add(&counters.frames_stored, 1);
                }
                if retired {
                    self.note_retired();
                }
            }
            BufferWritten::OverBudget => {
                counters.add(&counters.records_over_budget, u64::from(index.records));
                if !self.warned_budget {
                    self.warned_budget = true;
                    cupmon_log::warn!(
                        "the raw dump in {} reached its budget (--keep); recording stopped \
                         (records from now on are counted as dropped). Without --raw, cupmon \
                         keeps recording and retires the oldest data instead",
                        self.dump.dir().display()
                    );
                    self.shared.write_meta(|m| {
                        m.set("raw_budget_reached", true);
                    });
                }
            }
        }
        Ok(())
    }

    /// The worker is falling behind CUPTI: store buffers instead of compressing them
    /// until it catches up (CUPTI drops records when it runs out of buffers).
    fn behind(&self) -> bool {
        // Half the cap waiting: stored frames are 100x larger than compressed ones and
        // fill a --keep budget fast, so only a real risk of drops justifies them.
        let c = &self.shared.counters;
        let queued = c.buffers_queued.load(Ordering::Relaxed);
        let done = c.buffers_completed.load(Ordering::Relaxed);
        queued.saturating_sub(done) as usize * 2 > self.shared.config.max_buffers()
    }

    /// Segments went to keep the budget: the meta says so at once.
    fn note_retired(&self) {
        let retired = self.dump.retired();
        *self
            .shared
            .retired
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = retired;
        self.shared.write_meta(|_| {});
    }

    fn count_records(&mut self, buffer: &CompletedBuffer) -> (Option<Layout>, FrameIndex) {
        let counters = &self.shared.counters;
        let mut index = FrameIndex::default();
        let Ok(layout) = Layout::for_api_version(buffer.cupti_version()) else {
            if !self.warned_layout {
                cupmon_log::warn!(
                    "CUPTI API version {} is newer than this cupmon knows; buffers are written \
                     to the dump but not counted or kept for windows",
                    buffer.cupti_version()
                );
                self.warned_layout = true;
            }
            counters.add(&counters.decode_errors, 1);
            return (None, index);
        };
        let mut n = 0u64;
        // A writer that is behind CUPTI skips the digest too (readers then digest the
        // segment from its records), as it skips compression; not sooner: a digest
        // skipped once is lost for its whole segment, and CUPTI hands buffers over in
        // bursts (on the H200 at 600,000 kernels/s up to 29 of 64 waited at once with
        // the writer 31 % busy; skipping at an eighth of the cap lost every digest of
        // that 10-minute run, so `stats` read all 346 M records, 75 s).
        let digest = self.write_error.is_none() && !self.behind();
        for item in RecordIter::new(buffer.bytes(), layout) {
            match item {
                Ok(record) => {
                    n += 1;
                    index.add(&record);
                    self.streams.add(&record, self.dump.kernel_names());
                    self.stacks.see(&record);
                    if digest {
                        self.dump.digest_record(&record);
                    }
                    if let Some(count) = self.by_kind.get_mut(record.kind().as_u32() as usize) {
                        *count += 1;
                    }
                    if let Some(window) = &mut self.window {
                        window.push(record);
                    }
                }
                Err(_) => {
                    counters.add(&counters.decode_errors, 1);
                    break;
                }
            }
        }
        if !digest {
            self.dump.digest_skipped(n);
        }
        counters.add(&counters.records, n);
        let kernels = self.by_kind[ActivityKind::CONCURRENT_KERNEL.0 as usize]
            + self.by_kind[ActivityKind::KERNEL.0 as usize];
        counters.kernels.store(kernels, Ordering::Relaxed);
        let mut shared_kinds = counters
            .records_by_kind
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for (number, &count) in (0u32..).zip(&self.by_kind) {
            if count > 0 {
                let kind = ActivityKind(number);
                *shared_kinds
                    .entry(kind.cupti_name().into_owned())
                    .or_default() = count;
            }
        }
        (Some(layout), index)
    }

    fn finish(self) -> Option<String> {
        if self.stacks.attributed > 0 {
            // Launches whose stack note was gone (overwritten in the ring, or taken before
            // the session) are counted, so a reader can tell "no Python" from "lost".
            let (attributed, unattributed) = (self.stacks.attributed, self.stacks.unattributed);
            self.shared.write_meta(|m| {
                m.set(
                    "python_stack_records",
                    serde_json::json!({"attributed": attributed, "unattributed": unattributed}),
                );
            });
        }
        if let Some(t) = cupmon_cupti::python_stack_timing() {
            // CUPMON_PYTHON_STACK_TIMING=1: what the stack reads cost in this program.
            self.shared.write_meta(|m| {
                m.set(
                    "python_stack_timing",
                    serde_json::json!({
                        "reads": t.reads,
                        "ns_per_read": (t.ns_per_read * 10.0).round() / 10.0,
                        "clock_floor_ns": t.clock_floor_ns,
                    }),
                );
            });
        }
        let b = cupmon_cupti::launches::autograd::backward_counts();
        if b.attributed + b.forward_not_seen + b.forward_overwritten > 0 {
            // Backward ops whose NVTX range carried a sequence number (emit_nvtx): given
            // their forward op's stack, or why not (the process's counts so far).
            self.shared.write_meta(|m| {
                m.set(
                    "autograd_backward_ops",
                    serde_json::json!({
                        "attributed": b.attributed,
                        "forward_not_seen": b.forward_not_seen,
                        "forward_overwritten": b.forward_overwritten,
                    }),
                );
            });
        }
        if let Some(e) = self.write_error {
            return Some(e);
        }
        match self.dump.finish() {
            Ok(retired) => {
                *self
                    .shared
                    .retired
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = retired;
                None
            }
            Err(e) => Some(e.to_string()),
        }
    }
}
