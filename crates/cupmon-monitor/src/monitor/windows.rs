//! Trace windows: the window kinds enabled with their noise filters, the records
//! kept between start and end, filtered as PyTorch's monitor does.

use std::collections::BTreeMap;
use std::sync::mpsc;

use cupmon_window::{filter_window, TraceWindow};

use std::sync::atomic::Ordering;

use super::cpu_ranges::range_clock_ns;
use super::{lock, Monitor, WindowPhase};
use crate::msg::{Msg, WindowEvents};
use crate::window_filters::set_noise_filters;
use crate::{MonitorError, StateError, WINDOW_KINDS};

impl Monitor {
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
        // Before the kinds: from here on every annotation pushed is logged, and those
        // open now are, as the window's records may name them.
        let open = lock(&self.annotations).window_prepared();
        self.ranges_wanted.store(true, Ordering::Relaxed);
        for (id, name) in open {
            self.log_annotation(id, &name);
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
                Err(e) => cupmon_log::warn!("trace window without {kind}: {e}"),
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
            let start_ns = self.sample_clock()?;
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
    /// return its records filtered as PyTorch's CUPTI monitor does.
    pub fn end_window(&self) -> Result<TraceWindow, MonitorError> {
        let mut phase = lock(&self.window);
        let WindowPhase::Open { enabled, start_ns } =
            std::mem::replace(&mut *phase, WindowPhase::Idle)
        else {
            return Err(StateError::NoWindowOpen.into());
        };
        drop(phase);
        // NVTX ranges still open are drawn to here (their clock: `range_clock_ns`).
        let end_ns = range_clock_ns();
        let cupti = self.shared.cupti;
        for kind in enabled.iter().rev() {
            if let Err(e) = cupti.disable(*kind) {
                cupmon_log::warn!("{e}");
            }
        }
        self.flush(true)?;
        // A failed read leaves the samples as they are; the window is still worth having.
        let _ = self.sample_clock();
        let (tx, rx) = mpsc::sync_channel(1);
        self.shared.send(Msg::WindowEnd(tx));
        let WindowEvents {
            events,
            converted,
            off_clock,
        } = rx
            .recv()
            .map_err(|_| MonitorError::Worker("it exited during a window".into()))?;
        // The start was read from CUPTI's clock too: on the records' clock, converted alike.
        let start_ns = match self.shared.clock.fit() {
            Some(clock) => clock.to_unix(start_ns),
            None => start_ns,
        };
        if off_clock > 0 {
            cupmon_log::warn!(
                "{off_clock} records of this window carry another CUPTI client's timestamps and \
                 too few samples of that clock exist to convert them: left out"
            );
        }
        self.shared.counters.add(&self.shared.counters.windows, 1);
        self.ranges_wanted.store(false, Ordering::Relaxed);
        let (user_annotations, cpu_annotations, ranges_dropped) =
            lock(&self.annotations).window_ended((start_ns, end_ns));
        if ranges_dropped > 0 {
            cupmon_log::warn!(
                "{ranges_dropped} NVTX ranges and marks of this window left out (more than {} \
                 in one window)",
                super::cpu_ranges::MAX_PER_WINDOW
            );
        }
        self.log_cpu_annotations(&cpu_annotations);
        self.update_meta();
        let arrived = describe_records(&events, start_ns);
        let events = filter_window(events, start_ns);
        let summary = || {
            format!(
                "trace window from {start_ns}: {} records kept of those that arrived: {arrived}",
                events.len()
            )
        };
        if events.is_empty() && !arrived.is_empty() {
            cupmon_log::warn!("{}", summary());
        } else {
            cupmon_log::debug!("{}", summary());
        }
        let mut info = self.info();
        info.clock_converted = converted;
        info.off_clock_records = off_clock;
        Ok(TraceWindow {
            events,
            extra_activities: enabled.iter().map(|k| k.0).collect(),
            user_annotations,
            thread_resource_map: BTreeMap::new(),
            start_ns,
            cupmon: Some(info),
            device_properties: self.device_properties(),
            distributed_info: crate::meta::distributed_info(),
            cpu_annotations,
            // A live window leaves them out (counted in `off_clock_records`).
            off_clock: None,
        })
    }
}

/// "kernel 40, cuda_runtime 42 (API starts A..B)" for a diagnostic line.
fn describe_records(events: &[cupmon_window::WindowEvent], start_ns: u64) -> String {
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
