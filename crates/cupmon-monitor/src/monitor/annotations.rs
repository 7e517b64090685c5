//! User annotations: named CUPTI CUSTOM1 external-correlation ids, one stack per
//! thread as CUPTI's external-id stacks are.

use std::sync::atomic::Ordering;

use cupmon_cupti::ExternalCorrelationKind;

use super::{lock, Monitor};
use crate::{MonitorError, StateError};

impl Monitor {
    /// Push a named user annotation (a CUPTI CUSTOM1 external correlation id):
    /// GPU work launched until the matching pop is attributed to it in windows.
    pub fn push_annotation(&self, name: &str) -> Result<u64, MonitorError> {
        let id = self.next_annotation.fetch_add(1, Ordering::Relaxed);
        self.shared
            .cupti
            .push_external_correlation_id(ExternalCorrelationKind::CUSTOM1, id)?;
        lock(&self.annotations).insert(id, name.to_owned());
        self.log_annotation(id, name);
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
}
