//! User annotations: named CUPTI CUSTOM1 external-correlation ids, one stack per
//! thread as CUPTI's external-id stacks are.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cupmon_cupti::ExternalCorrelationKind;

use super::{lock, Monitor};
use crate::{MonitorError, StateError};

/// Annotation names held in memory: those open now, and from a window's preparation
/// to its end, every name pushed (a window's records name ids open at its start or
/// pushed during it). Names shared, so a name pushed again costs no allocation.
#[derive(Debug, Default)]
pub(crate) struct AnnotationNames {
    open: BTreeMap<u64, Arc<str>>,
    window: Option<BTreeMap<u64, Arc<str>>>,
}

impl AnnotationNames {
    fn pushed(&mut self, id: u64, name: &Arc<str>) {
        self.open.insert(id, name.clone());
        if let Some(window) = &mut self.window {
            window.insert(id, name.clone());
        }
    }

    fn closed(&mut self, id: u64) {
        self.open.remove(&id);
    }

    pub(crate) fn window_prepared(&mut self) {
        self.window = Some(self.open.clone());
    }

    /// The names the window's records may need, as the window writes them.
    pub(crate) fn window_ended(&mut self) -> BTreeMap<u64, String> {
        self.window
            .take()
            .unwrap_or_else(|| self.open.clone())
            .into_iter()
            .map(|(id, name)| (id, name.to_string()))
            .collect()
    }
}

impl Monitor {
    /// Push a named user annotation (a CUPTI CUSTOM1 external correlation id):
    /// GPU work launched until the matching pop is attributed to it in windows.
    pub fn push_annotation(&self, name: &str) -> Result<u64, MonitorError> {
        let id = self.push_shared_annotation(&Arc::from(name))?;
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
    pub fn push_shared_annotation(&self, name: &Arc<str>) -> Result<u64, MonitorError> {
        let id = self.next_annotation.fetch_add(1, Ordering::Relaxed);
        self.shared
            .cupti
            .push_external_correlation_id(ExternalCorrelationKind::CUSTOM1, id)?;
        lock(&self.annotations).pushed(id, name);
        self.log_annotation(id, name);
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
        lock(&self.annotations).closed(id);
    }
}
