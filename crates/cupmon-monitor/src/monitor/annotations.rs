//! User annotations: named CUPTI CUSTOM1 external-correlation ids, one stack per
//! thread as CUPTI's external-id stacks are.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cupmon_cupti::ExternalCorrelationKind;

use super::{lock, Monitor};
use crate::{MonitorError, StateError};

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
        self.pop_shared_annotation()
    }

    /// Push an annotation whose name the caller interned (NVTX ranges: the same few
    /// names over and over), without the per-thread bookkeeping of
    /// [`Monitor::push_annotation`]: the caller keeps its own stack and pops with
    /// [`Monitor::pop_shared_annotation`]. Returns the annotation's id.
    pub fn push_shared_annotation(&self, name: &Arc<str>) -> Result<u64, MonitorError> {
        let id = self.next_annotation.fetch_add(1, Ordering::Relaxed);
        self.shared
            .cupti
            .push_external_correlation_id(ExternalCorrelationKind::CUSTOM1, id)?;
        lock(&self.annotations).insert(id, name.clone());
        self.log_annotation(id, name);
        Ok(id)
    }

    /// Pop this thread's innermost CUSTOM1 id from CUPTI's stack (pushed by
    /// [`Monitor::push_shared_annotation`]); returns it.
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
}
