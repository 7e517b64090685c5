//! User annotations: named CUPTI CUSTOM1 external-correlation ids, one stack per
//! thread as CUPTI's external-id stacks are.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cupmon_cupti::ExternalCorrelationKind;
use rustc_hash::FxHashMap;

use super::cpu_ranges::{annotation, window_ranges, Kept, RangeStart, WindowRanges};
use super::{lock, Monitor};
use crate::{MonitorError, StateError};
use cupmon_window::{CpuAnnotation, CpuAnnotationKind};

/// An open annotation: its name, whether it is in the dump's log, and for an NVTX
/// range its CPU side.
#[derive(Debug)]
struct OpenAnnotation {
    name: Arc<str>,
    logged: bool,
    cpu: Option<RangeStart>,
}

/// Annotation names held in memory: those open now, and from a window's preparation
/// to its end, every name pushed (a window's records name ids open at its start or
/// pushed during it). Names shared, so a name pushed again costs no allocation.
#[derive(Debug, Default)]
pub(crate) struct AnnotationNames {
    /// Open annotations.
    /// A hash map: it keeps its capacity, so a push/pop pair allocates nothing (a
    /// B-tree allocates a node whenever it goes from empty to one entry). Fx-hashed:
    /// the keys are cupmon's own sequential ids, and SipHash was a tenth of a
    /// push/pop pair's time (bench/nvtx/RESULTS.md).
    open: FxHashMap<u64, OpenAnnotation>,
    window: Option<BTreeMap<u64, Arc<str>>>,
    /// NVTX ranges closed and marks made since the window was prepared.
    ranges: WindowRanges,
    /// EXTERNAL_CORRELATION is always on (in the session's kinds): every record of a
    /// launch may name an annotation.
    always: bool,
}

impl AnnotationNames {
    pub(crate) fn new(always: bool) -> Self {
        Self {
            always,
            ..Self::default()
        }
    }

    /// Whether to log `id` now: asked to, or a record can name it (a window is
    /// prepared or open, so the EXTERNAL_CORRELATION kind is on).
    fn pushed(&mut self, id: u64, name: &Arc<str>, log_now: bool, cpu: Option<RangeStart>) -> bool {
        let log = log_now || self.always || self.window.is_some();
        if let Some(window) = &mut self.window {
            window.insert(id, name.clone());
        }
        self.open.insert(
            id,
            OpenAnnotation {
                name: name.clone(),
                logged: log,
                cpu,
            },
        );
        log
    }

    /// `id` closed, at `end_ns` for an NVTX range: kept, in a window.
    pub(super) fn closed_at(&mut self, id: u64, end_ns: Option<u64>) {
        let Some(open) = self.open.remove(&id) else {
            return;
        };
        if let (Some(_), Some(start), Some(end_ns)) = (&self.window, open.cpu, end_ns) {
            self.ranges.keep(Kept {
                kind: CpuAnnotationKind::Range,
                name: open.name,
                start,
                end_ns,
                external_id: Some(id),
            });
        }
    }

    pub(super) fn keep_mark(&mut self, mark: Kept) {
        if self.window.is_some() {
            self.ranges.keep(mark);
        }
    }

    /// Called before the window's kinds are enabled; returns the open annotations,
    /// which the window's records may name from now on.
    /// Those not logged yet are marked logged: the caller logs them.
    pub(crate) fn window_prepared(&mut self) -> Vec<(u64, Arc<str>)> {
        self.window = Some(
            self.open
                .iter()
                .map(|(&id, open)| (id, open.name.clone()))
                .collect(),
        );
        self.ranges = WindowRanges::default();
        let mut unlogged: Vec<(u64, Arc<str>)> = self
            .open
            .iter_mut()
            .filter(|(_, open)| !open.logged)
            .map(|(&id, open)| {
                open.logged = true;
                (id, open.name.clone())
            })
            .collect();
        unlogged.sort_unstable_by_key(|&(id, _)| id);
        unlogged
    }

    /// The names the window's records may need, as the window writes them, and
    /// the NVTX ranges and marks of the window `[start_ns, end_ns]`
    /// (`cpu_ranges::window_ranges`), with how many were left out.
    pub(crate) fn window_ended(
        &mut self,
        span: (u64, u64),
    ) -> (BTreeMap<u64, String>, Vec<CpuAnnotation>, u64) {
        let names = self
            .window
            .take()
            .unwrap_or_default()
            .into_iter()
            .map(|(id, name)| (id, name.to_string()))
            .collect();
        let WindowRanges { done, dropped } = std::mem::take(&mut self.ranges);
        let open = self.open.iter().filter_map(|(&id, open)| {
            let start = open.cpu?;
            Some(annotation(
                CpuAnnotationKind::Range,
                &open.name,
                &start,
                span.1,
                Some(id),
            ))
        });
        let done = done.iter().map(Kept::annotation).collect();
        let ranges = window_ranges(done, open, span);
        (names, ranges, dropped)
    }
}

impl Monitor {
    /// Push a named user annotation (a CUPTI CUSTOM1 external correlation id):
    /// GPU work launched until the matching pop is attributed to it in windows.
    /// Its name goes to the dump's log at once, window or not.
    pub fn push_annotation(&self, name: &str) -> Result<u64, MonitorError> {
        let id = self.push_named(&Arc::from(name), true)?;
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
        let id = self.pop_shared_annotation()?;
        self.annotation_closed(id);
        Ok(id)
    }

    /// Push an annotation whose name the caller interned (NVTX ranges: the same few
    /// names over and over), without the per-thread bookkeeping of
    /// [`Monitor::push_annotation`]: the caller keeps its own stack and pops with
    /// [`Monitor::pop_shared_annotation`], then says [`Monitor::annotation_closed`].
    /// Returns the annotation's id.
    ///
    /// Its name goes to the dump's log only when a record can name it: a window is
    /// prepared or open (the only time CUPTI links launches to CUSTOM1 ids, unless
    /// EXTERNAL_CORRELATION is always on), or it is still open when one is prepared.
    /// Outside windows a push costs no system call and the log does not grow.
    pub fn push_shared_annotation(&self, name: &Arc<str>) -> Result<u64, MonitorError> {
        self.push_named(name, false)
    }

    /// `log_now`: write the name to the dump's log whether a record can name it yet.
    fn push_named(&self, name: &Arc<str>, log_now: bool) -> Result<u64, MonitorError> {
        self.push_named_with(name, log_now, None)
    }

    /// `cpu`: an NVTX range's CPU side, kept with the open annotation.
    pub(super) fn push_named_with(
        &self,
        name: &Arc<str>,
        log_now: bool,
        cpu: Option<RangeStart>,
    ) -> Result<u64, MonitorError> {
        let id = self.next_annotation.fetch_add(1, Ordering::Relaxed);
        self.shared
            .cupti
            .push_external_correlation_id(ExternalCorrelationKind::CUSTOM1, id)?;
        let logged = lock(&self.annotations).pushed(id, name, log_now, cpu);
        if logged {
            self.log_annotation(id, name);
        }
        Ok(id)
    }

    /// Pop this thread's innermost CUSTOM1 id from CUPTI's stack (pushed by
    /// [`Monitor::push_shared_annotation`] or pushed again); returns it. The annotation
    /// is still open until [`Monitor::annotation_closed`].
    pub fn pop_shared_annotation(&self) -> Result<u64, MonitorError> {
        Ok(self
            .shared
            .cupti
            .pop_external_correlation_id(ExternalCorrelationKind::CUSTOM1)?)
    }

    /// Push an id [`Monitor::push_shared_annotation`] pushed before and that was
    /// popped to reach one below it (NVTX ranges closed out of order): named already.
    pub fn push_annotation_again(&self, id: u64) -> Result<(), MonitorError> {
        Ok(self
            .shared
            .cupti
            .push_external_correlation_id(ExternalCorrelationKind::CUSTOM1, id)?)
    }

    /// The annotation `id` has ended: its name is no longer held (unless a window
    /// needs it); the dump's log keeps it.
    pub fn annotation_closed(&self, id: u64) {
        lock(&self.annotations).closed_at(id, None);
    }
}
