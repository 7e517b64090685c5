//! What the monitor reports: its counters, the GPUs, the completeness facts every
//! trace carries, and the dump's meta and annotation log kept up to date.

use std::sync::atomic::{AtomicU64, Ordering};

use cupmon_cupti::callback_stats;
use cupmon_records::dump::AnnotationLog;
use cupmon_window::CupmonInfo;

use super::{lock, AnnotationLogState, Monitor};
use crate::meta::MetaEntry;
use crate::stats::{BufferUse, MonitorStats, QuietStretch};
use crate::MonitorError;

impl Monitor {
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

    /// Read CUPTI's clock and Unix time together; a sample of the clock when another
    /// client's timestamp callback sets it. Returns CUPTI's reading.
    pub(super) fn sample_clock(&self) -> Result<u64, MonitorError> {
        // A CUPTI that cannot give its time is an error here (not in clock_pair).
        self.shared.cupti.timestamp()?;
        let (cupti_ns, unix_ns) = self.shared.clock_pair();
        self.shared.clock.note(cupti_ns, unix_ns);
        Ok(cupti_ns)
    }

    /// Kernels per second over the last flush periods (0 before two have passed).
    pub fn kernel_rate(&self) -> f64 {
        let samples = self
            .shared
            .counters
            .kernel_samples
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match (samples.front(), samples.back()) {
            (Some(&(t0, k0)), Some(&(t1, k1))) if t1 > t0 => {
                k1.saturating_sub(k0) as f64 / (t1 - t0).as_secs_f64()
            }
            _ => 0.0,
        }
    }

    /// What a trace must say about completeness.
    pub fn info(&self) -> CupmonInfo {
        let stats = self.stats();
        CupmonInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            dropped_records: Some(stats.dropped_records),
            cupti_version: Some(stats.cupti_version),
            unresolved_kernel_names: 0,
            kernels: Some(self.kernel_account()),
            ..CupmonInfo::default()
        }
    }

    /// The session's kernels so far: launched, recorded, dropped, unaccounted, gaps.
    pub fn kernel_account(&self) -> cupmon_records::dump::KernelAccount {
        let ledger = lock(&self.shared.ledger)
            .snapshot(&self.shared.counters, self.shared.dropped_records());
        let mut meta = cupmon_records::MetaFile::new();
        ledger.write_to(&mut meta);
        meta.set("dropped_records", self.shared.dropped_records())
            .set("session_open", lock(&self.worker).is_some());
        cupmon_records::dump::KernelAccount::of(&meta)
    }

    pub fn stats(&self) -> MonitorStats {
        let s = self.shared;
        let c = &s.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let callbacks = callback_stats();
        let queued = load(&c.buffers_queued).saturating_sub(load(&c.buffers_completed));
        // One lock at a time: temporaries of a struct literal live to its end.
        let retired = lock(&s.retired).clone();
        let ledger = lock(&s.ledger).snapshot(c, s.dropped_records());
        let dropped_records = s.dropped_records();
        let launched = ledger.counted.then_some(ledger.kernels_launched);
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
                buffer_size: s.config.buffer_size,
                mapped_on_request: s.pool.mapped_on_request(),
            },
            bytes_written: load(&c.bytes_written),
            buffer_bytes: load(&c.buffer_bytes),
            frames_stored: load(&c.frames_stored),
            starvation_flushes: load(&c.starvation_flushes),
            flush_longest_ms: load(&c.flush_longest_us) / 1000,
            records_over_budget: load(&c.records_over_budget),
            retired_segments: retired.segments,
            retired_bytes: retired.bytes,
            records: load(&c.records),
            records_by_kind: lock(&c.records_by_kind).clone(),
            dropped_records,
            kernels_launched: launched,
            launches_not_counted: ledger.not_counted.clone(),
            kernels_recorded: ledger.kernels_recorded,
            kernels_unaccounted: launched
                .map(|l| l.saturating_sub(ledger.kernels_recorded.saturating_add(dropped_records))),
            unsized_graph_launches: ledger.unsized_graph_launches,
            recoveries: load(&c.recoveries),
            delivery_gaps: ledger.gaps.len() as u64,
            flushes_skipped: load(&c.flushes_skipped),
            buffers_lost: load(&c.buffers_lost),
            buffer_requests_refused: s.pool.refused(),
            quiet: QuietStretch {
                periods: load(&c.quiet_periods_max),
                buffers_held: load(&c.quiet_buffers_held),
                refused: load(&c.quiet_refused),
            },
            decode_errors: load(&c.decode_errors),
            windows_taken: load(&c.windows),
            window_open: self.window_open(),
            kernel_names: load(&c.kernel_names),
            worker: c.worker.snapshot(),
        }
    }

    /// Append a newly pushed annotation to the dump's `user_annotations.jsonl` at
    /// once: no record can name it before it is pushed, so a kill at any moment loses
    /// no name of a record already in the dump. One small unbuffered `write` per push.
    pub(super) fn log_annotation(&self, id: u64, name: &str) {
        let mut log = lock(&self.annotation_log);
        if let AnnotationLogState::Closed = *log {
            *log = match AnnotationLog::open(&self.shared.config.dump_dir) {
                Ok(opened) => AnnotationLogState::Open(opened),
                Err(e) => {
                    cupmon_log::warn!("{e}: annotation names are kept in windows only");
                    AnnotationLogState::Failed
                }
            };
        }
        if let AnnotationLogState::Open(opened) = &mut *log {
            if let Err(e) = opened.append(id, name) {
                cupmon_log::warn!("{e}: annotation names are kept in windows only");
                *log = AnnotationLogState::Failed;
            }
        }
    }

    /// Rewrite the meta with the counts so far (dropped records above all), the session
    /// still open: a reader of the dump knows the counts may grow.
    pub(super) fn update_meta(&self) {
        self.write_meta(true);
    }

    /// The last meta of the session, written once the worker has written everything:
    /// `session_open: false` makes its counts final.
    pub(super) fn close_meta(&self) {
        self.write_meta(false);
    }

    fn write_meta(&self, session_open: bool) {
        let stats = self.stats();
        let devices = self.device_properties();
        let samples = self.shared.clock.pairs();
        let ledger = lock(&self.shared.ledger)
            .snapshot(&self.shared.counters, self.shared.dropped_records());
        self.shared.write_meta(|meta| {
            ledger.write_to(meta);
            if let Some(devices) = devices {
                meta.set("device_properties", devices);
            }
            if !samples.is_empty() {
                meta.set("clock_samples", serde_json::json!(samples));
            }
            meta.set("dropped_records", stats.dropped_records)
                .set("session_open", session_open)
                .set("buffer_requests_refused", stats.buffer_requests_refused)
                .set("records", stats.records)
                .set("chunks_written", stats.buffers_completed)
                .set("bytes_written", stats.bytes_written)
                .set("buffer_bytes", stats.buffer_bytes)
                .set("frames_stored", stats.frames_stored);
            if stats.records_over_budget > 0 {
                meta.set("records_over_budget", stats.records_over_budget);
            }
            meta.set("flush_longest_ms", stats.flush_longest_ms);
            if stats.starvation_flushes > 0 {
                meta.set("starvation_flushes", stats.starvation_flushes);
            }
            if stats.flushes_skipped > 0 {
                meta.set("flushes_skipped", stats.flushes_skipped);
            }
            if stats.quiet.periods > 0 {
                meta.set("flusher_quiet", serde_json::json!(stats.quiet));
            }
            stats.buffers.write_to(meta);
            stats.worker.write_to(meta);
        });
    }
}
