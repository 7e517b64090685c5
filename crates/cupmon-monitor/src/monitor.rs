//! A monitoring session: CUPTI set up, the worker and the flush timer
//! running, trace windows and annotations on request.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cupmon_cupti::{
    callback_stats, ActivityKind, Cupti, ExternalCorrelationKind, FlushFlag, ThreadIdType,
};
use cupmon_records::dump::USER_ANNOTATIONS_FILE;
use cupmon_records::{DumpWriter, MetaFile};
use cupmon_trace::{filter_window, CupmonInfo, TraceWindow};

use crate::config::{MonitorConfig, WINDOW_KINDS};
use crate::flusher::Flusher;
use crate::meta::session_meta;
use crate::shared::Shared;
use crate::stats::{BufferUse, MetaEntry, MonitorStats};
use crate::window_filters::set_noise_filters;
use crate::worker::{Msg, Worker};
use crate::{MonitorError, StateError};

/// CUSTOM1 ids cupmon pushes start here, far from the small ids Kineto and
/// applications use for their own annotations.
const ANNOTATION_ID_BASE: u64 = 0x6375_0000_0000_0000;

#[derive(Debug)]
enum WindowPhase {
    Idle,
    /// Window kinds enabled; records are not kept yet.
    Prepared {
        enabled: Vec<ActivityKind>,
    },
    Open {
        enabled: Vec<ActivityKind>,
        start_ns: u64,
    },
}

/// The live monitor of this process. One at a time: CUPTI has one set of
/// activity callbacks per process.
pub struct Monitor {
    shared: &'static Shared,
    worker: Mutex<Option<JoinHandle<()>>>,
    flusher: Mutex<Option<Flusher>>,
    window: Mutex<WindowPhase>,
    annotations: Mutex<BTreeMap<u64, String>>,
    /// Open annotations per thread: CUPTI's external-id stacks are per thread.
    annotation_stacks: Mutex<std::collections::HashMap<std::thread::ThreadId, Vec<u64>>>,
    next_annotation: AtomicU64,
    meta: Mutex<MetaFile>,
    started: Instant,
    devices: std::sync::OnceLock<serde_json::Value>,
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor")
            .field("dump_dir", &self.shared.config.dump_dir)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Monitor {
    /// Load CUPTI (checking for the driver first), create the dump directory,
    /// register the buffer callbacks and enable the always-on kinds.
    pub fn start(config: MonitorConfig) -> Result<Self, MonitorError> {
        config.validate()?;
        let cupti = Cupti::load()?;
        Self::start_with(cupti, config)
    }

    /// [`Monitor::start`] with a CUPTI already loaded.
    pub fn start_with(cupti: &'static Cupti, config: MonitorConfig) -> Result<Self, MonitorError> {
        config.validate()?;
        let meta = session_meta(cupti, &config)?;
        let dump = DumpWriter::create(&config.dump_dir, &meta)?;
        let (tx, rx) = mpsc::channel();
        let shared: &'static Shared = Box::leak(Box::new(Shared::new(cupti, config, tx)));
        let worker = Worker::new(shared, dump);
        let worker = std::thread::Builder::new()
            .name("cupmon-worker".into())
            .spawn(move || worker.run(rx))
            .map_err(|e| MonitorError::Worker(e.to_string()))?;
        // The pool must hold buffers before CUPTI asks for the first one.
        shared.pool.refill();
        let monitor = Monitor {
            shared,
            worker: Mutex::new(Some(worker)),
            flusher: Mutex::new(None),
            window: Mutex::new(WindowPhase::Idle),
            annotations: Mutex::new(BTreeMap::new()),
            annotation_stacks: Mutex::new(std::collections::HashMap::new()),
            next_annotation: AtomicU64::new(ANNOTATION_ID_BASE),
            meta: Mutex::new(meta),
            started: Instant::now(),
            devices: std::sync::OnceLock::new(),
        };
        cupti.set_thread_id_type(ThreadIdType::SYSTEM)?;
        cupti.register_callbacks(shared)?;
        for &kind in &shared.config.kinds {
            cupti.enable(kind)?;
        }
        *lock(&monitor.flusher) = Some(Flusher::spawn(shared)?);
        Ok(monitor)
    }

    /// Hand every buffer to `observer` too (after writing it), from now on.
    pub fn set_observer(&self, observer: std::sync::Arc<dyn crate::BufferObserver>) {
        *self
            .shared
            .observer
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(observer);
    }

    /// Take CUPTI's activity callbacks back (after another client in the
    /// process registered its own) and turn cupmon's kinds on again. Buffers
    /// CUPTI completed while the other client held the callbacks went to it;
    /// those that never come back are counted as lost when the session stops.
    /// Returns how many of cupmon's buffers CUPTI holds now.
    pub fn rearm(&self) -> Result<u64, MonitorError> {
        self.shared.cupti.register_callbacks(self.shared)?;
        self.shared.cupti.reenable_all()?;
        Ok(callback_stats().outstanding_buffers)
    }

    pub fn config(&self) -> &MonitorConfig {
        &self.shared.config
    }

    pub fn cupti(&self) -> &'static Cupti {
        self.shared.cupti
    }

    /// Time since the session started.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Wait until the worker has handled everything queued so far.
    fn barrier(&self) -> Result<(), MonitorError> {
        let (tx, rx) = mpsc::sync_channel(1);
        if !self.shared.send(Msg::Barrier(tx)) {
            return Err(MonitorError::Worker("it is not running".into()));
        }
        rx.recv()
            .map_err(|_| MonitorError::Worker("it exited".into()))
    }

    /// Hand CUPTI's completed buffers to the worker and wait until they are
    /// written. `forced` also returns buffers with unfinished kernels (their
    /// end time is then 0).
    pub fn flush(&self, forced: bool) -> Result<(), MonitorError> {
        let cupti = self.shared.cupti;
        cupti.flush_all(FlushFlag::NONE)?;
        self.barrier()?;
        if forced {
            cupti.flush_all(FlushFlag::FORCED)?;
            self.barrier()?;
        }
        Ok(())
    }

    /// Enable the window kinds (runtime, driver, external correlation,
    /// overhead, synchronization, CUDA events) with the noise filters, so a
    /// later [`Monitor::start_window`] is quick.
    pub fn prepare_window(&self) -> Result<(), MonitorError> {
        let mut phase = lock(&self.window);
        match *phase {
            WindowPhase::Idle => {}
            WindowPhase::Prepared { .. } => return Err(StateError::WindowAlreadyPrepared.into()),
            WindowPhase::Open { .. } => return Err(StateError::WindowAlreadyOpen.into()),
        }
        let cupti = self.shared.cupti;
        let mut enabled = Vec::new();
        for kind in WINDOW_KINDS {
            if self.shared.config.kinds.contains(&kind) {
                continue;
            }
            match cupti.enable(kind) {
                Ok(()) => enabled.push(kind),
                // A kind this CUPTI lacks narrows the window; it does not fail it.
                Err(e) => eprintln!("cupmon: warning: trace window without {kind}: {e}"),
            }
        }
        set_noise_filters(cupti);
        *phase = WindowPhase::Prepared { enabled };
        Ok(())
    }

    /// Open the window: flush what came before, wait for the worker, stamp
    /// the start. Prepares first if needed. Returns the start (CUPTI ns).
    pub fn start_window(&self) -> Result<u64, MonitorError> {
        if matches!(*lock(&self.window), WindowPhase::Idle) {
            self.prepare_window()?;
        }
        let mut phase = lock(&self.window);
        let enabled = match std::mem::replace(&mut *phase, WindowPhase::Idle) {
            WindowPhase::Prepared { enabled } => enabled,
            open @ WindowPhase::Open { .. } => {
                *phase = open;
                return Err(StateError::WindowAlreadyOpen.into());
            }
            WindowPhase::Idle => return Err(StateError::WindowNotPrepared.into()),
        };
        let result = self.flush(false).and_then(|()| {
            let start_ns = self.shared.cupti.timestamp()?;
            self.shared.send(Msg::WindowStart);
            Ok(start_ns)
        });
        match result {
            Ok(start_ns) => {
                *phase = WindowPhase::Open { enabled, start_ns };
                Ok(start_ns)
            }
            Err(e) => {
                *phase = WindowPhase::Prepared { enabled };
                Err(e)
            }
        }
    }

    pub fn window_open(&self) -> bool {
        matches!(*lock(&self.window), WindowPhase::Open { .. })
    }

    /// Close the window: disable its kinds, flush (plain, then forced), and
    /// return its records filtered as the seed's monitor does.
    pub fn end_window(&self) -> Result<TraceWindow, MonitorError> {
        let mut phase = lock(&self.window);
        let WindowPhase::Open { enabled, start_ns } =
            std::mem::replace(&mut *phase, WindowPhase::Idle)
        else {
            return Err(StateError::NoWindowOpen.into());
        };
        drop(phase);
        let cupti = self.shared.cupti;
        for kind in enabled.iter().rev() {
            if let Err(e) = cupti.disable(*kind) {
                eprintln!("cupmon: warning: {e}");
            }
        }
        self.flush(true)?;
        let (tx, rx) = mpsc::sync_channel(1);
        self.shared.send(Msg::WindowEnd(tx));
        let events = rx
            .recv()
            .map_err(|_| MonitorError::Worker("it exited during a window".into()))?;
        self.shared.counters.add(&self.shared.counters.windows, 1);
        let user_annotations = lock(&self.annotations).clone();
        self.write_annotations(&user_annotations);
        self.update_meta();
        let arrived = describe_records(&events, start_ns);
        let events = filter_window(events, start_ns);
        if events.is_empty() && !arrived.is_empty()
            || std::env::var_os(crate::env_vars::DEBUG).is_some()
        {
            eprintln!("cupmon: trace window from {start_ns}: {} records kept of those that arrived: {arrived}", events.len());
        }
        Ok(TraceWindow {
            events,
            extra_activities: enabled.iter().map(|k| k.0).collect(),
            user_annotations,
            thread_resource_map: BTreeMap::new(),
            start_ns,
            cupmon: Some(self.info()),
            device_properties: self.device_properties(),
        })
    }

    /// Push a named user annotation (a CUPTI CUSTOM1 external correlation id):
    /// GPU work launched until the matching pop is attributed to it in windows.
    pub fn push_annotation(&self, name: &str) -> Result<u64, MonitorError> {
        let id = self.next_annotation.fetch_add(1, Ordering::Relaxed);
        self.shared
            .cupti
            .push_external_correlation_id(ExternalCorrelationKind::CUSTOM1, id)?;
        lock(&self.annotations).insert(id, name.to_owned());
        lock(&self.annotation_stacks)
            .entry(std::thread::current().id())
            .or_default()
            .push(id);
        Ok(id)
    }

    /// Pop this thread's innermost annotation pushed by [`Monitor::push_annotation`].
    pub fn pop_annotation(&self) -> Result<u64, MonitorError> {
        let popped = lock(&self.annotation_stacks)
            .get_mut(&std::thread::current().id())
            .and_then(Vec::pop);
        if popped.is_none() {
            return Err(StateError::NoAnnotationOpen.into());
        }
        Ok(self
            .shared
            .cupti
            .pop_external_correlation_id(ExternalCorrelationKind::CUSTOM1)?)
    }

    /// The GPUs as Kineto's `deviceProperties`, read from the driver once it
    /// can answer (not during `cuInit`, where the injection starts cupmon).
    pub fn device_properties(&self) -> Option<serde_json::Value> {
        if let Some(known) = self.devices.get() {
            return Some(known.clone());
        }
        let devices = cupmon_cupti::device_properties()?;
        let json: Vec<serde_json::Value> = devices
            .iter()
            .map(|d| {
                serde_json::json!({
                    "id": d.id, "name": d.name, "totalGlobalMem": d.total_global_mem,
                    "computeMajor": d.compute_major, "computeMinor": d.compute_minor,
                    "maxThreadsPerBlock": d.max_threads_per_block,
                    "maxThreadsPerMultiprocessor": d.max_threads_per_multiprocessor,
                    "regsPerBlock": d.regs_per_block, "warpSize": d.warp_size,
                    "sharedMemPerBlock": d.shared_mem_per_block, "numSms": d.num_sms,
                    "regsPerMultiprocessor": d.regs_per_multiprocessor,
                    "sharedMemPerBlockOptin": d.shared_mem_per_block_optin,
                    "sharedMemPerMultiprocessor": d.shared_mem_per_multiprocessor,
                })
            })
            .collect();
        Some(
            self.devices
                .get_or_init(|| serde_json::Value::Array(json))
                .clone(),
        )
    }

    /// What a trace must say about completeness.
    pub fn info(&self) -> CupmonInfo {
        let stats = self.stats();
        CupmonInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            dropped_records: stats.dropped_records,
            cupti_version: Some(stats.cupti_version),
            unresolved_kernel_names: 0,
        }
    }

    pub fn stats(&self) -> MonitorStats {
        let s = self.shared;
        let c = &s.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let callbacks = callback_stats();
        let queued = load(&c.buffers_queued).saturating_sub(load(&c.buffers_completed));
        MonitorStats {
            running: lock(&self.worker).is_some(),
            dump_dir: s.config.dump_dir.display().to_string(),
            cupti_version: s.cupti.version(),
            cupti_library: s.cupti.path().display().to_string(),
            buffers_completed: load(&c.buffers_completed),
            buffers_allocated: s.pool.allocated_total(),
            buffers_pending: callbacks.outstanding_buffers + queued,
            buffers_free: s.pool.free_count() as u64,
            buffers: BufferUse {
                max_in_use: s.pool.max_in_use() as u64,
                cap: s.config.max_buffers() as u64,
                buffer_size: s.config.buffer_size as u64,
                mapped_on_request: s.pool.mapped_on_request(),
            },
            bytes_written: load(&c.bytes_written),
            records: load(&c.records),
            records_by_kind: lock(&c.records_by_kind).clone(),
            dropped_records: load(&c.dropped_by_cupti),
            buffers_lost: load(&c.buffers_lost),
            buffer_requests_refused: s.pool.refused(),
            decode_errors: load(&c.decode_errors),
            windows_taken: load(&c.windows),
            window_open: self.window_open(),
            kernel_names: load(&c.kernel_names),
            worker: c.worker.snapshot(),
        }
    }

    fn write_annotations(&self, annotations: &BTreeMap<u64, String>) {
        if annotations.is_empty() {
            return;
        }
        let path = self.shared.config.dump_dir.join(USER_ANNOTATIONS_FILE);
        if let Err(e) = cupmon_records::dump::write_user_annotations(&path, annotations) {
            eprintln!("cupmon: warning: {e}");
        }
    }

    /// Rewrite the meta with the counts so far (dropped records above all).
    fn update_meta(&self) {
        let stats = self.stats();
        let devices = self.device_properties();
        let mut meta = lock(&self.meta);
        if let Some(devices) = devices {
            meta.set("device_properties", devices);
        }
        meta.set("dropped_records", stats.dropped_records)
            .set("buffer_requests_refused", stats.buffer_requests_refused)
            .set("records", stats.records)
            .set("chunks_written", stats.buffers_completed);
        stats.buffers.write_to(&mut meta);
        stats.worker.write_to(&mut meta);
        if let Err(e) = meta.write(
            self.shared
                .config
                .dump_dir
                .join(cupmon_records::dump::META_FILE),
        ) {
            eprintln!("cupmon: warning: {e}");
        }
    }

    /// End the session: close an open window (returned), disable collection,
    /// flush everything (plain, then forced), write the meta and close the
    /// dump. Never calls `cuptiFinalize`.
    ///
    /// Takes `&self` so that a monitor shared between threads can be stopped
    /// by one of them; a second call is an error.
    pub fn stop(&self) -> Result<(MonitorStats, Option<TraceWindow>), MonitorError> {
        if lock(&self.worker).is_none() {
            return Err(StateError::Stopped.into());
        }
        self.stop_flusher();
        let window = if self.window_open() {
            Some(self.end_window()?)
        } else {
            None
        };
        if let WindowPhase::Prepared { enabled } =
            std::mem::replace(&mut *lock(&self.window), WindowPhase::Idle)
        {
            for kind in enabled {
                let _ = self.shared.cupti.disable(kind);
            }
        }
        let flushed = self.flush(true);
        for &kind in self.shared.config.kinds.iter().rev() {
            let _ = self.shared.cupti.disable(kind);
        }
        let _ = self.shared.cupti.flush_all(FlushFlag::FORCED);
        // After a forced flush CUPTI holds nothing of cupmon's: what it still
        // holds went to another client and will not come back.
        let lost = callback_stats().outstanding_buffers;
        if lost > 0 {
            self.shared
                .counters
                .add(&self.shared.counters.buffers_lost, lost);
            eprintln!(
                "cupmon: warning: {lost} buffers of records went to another CUPTI client in this \
                 process and are lost (run under `cupmon run` so that cupmon shares CUPTI)"
            );
        }
        self.write_annotations(&lock(&self.annotations).clone());
        self.update_meta();
        let (tx, rx) = mpsc::sync_channel(1);
        self.shared.send(Msg::Stop(tx));
        let write_error = rx.recv().ok().flatten();
        self.shared.close_queue();
        let worker = lock(&self.worker).take();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
        self.shared.pool.drain();
        let mut stats = self.stats();
        stats.running = false;
        flushed?;
        if let Some(e) = write_error {
            return Err(MonitorError::Worker(format!(
                "writing the dump failed: {e}"
            )));
        }
        Ok((stats, window))
    }

    fn stop_flusher(&self) {
        let flusher = lock(&self.flusher).take();
        if let Some(flusher) = flusher {
            flusher.stop();
        }
    }
}

/// "kernel 40, cuda_runtime 42 (API starts A..B)" for a diagnostic line.
fn describe_records(events: &[cupmon_trace::WindowEvent], start_ns: u64) -> String {
    if events.is_empty() {
        return String::new();
    }
    let mut by_kind: BTreeMap<&str, u64> = BTreeMap::new();
    let (mut lo, mut hi, mut before) = (u64::MAX, 0, 0);
    for e in events {
        *by_kind.entry(e.kind_name()).or_default() += 1;
        if e.is_api() {
            lo = lo.min(e.start_ns());
            hi = hi.max(e.start_ns());
            before += u64::from(e.start_ns() < start_ns);
        }
    }
    let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!(
        "{} (API records start {lo}..{hi}, {before} before the window start)",
        kinds.join(", ")
    )
}
