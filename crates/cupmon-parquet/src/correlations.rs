//! External correlation: which CPU op (torch.profiler's CUSTOM0 id, the Chrome
//! trace's `External id`) and which user annotation (CUSTOM1, named in the dump's
//! user annotations) each correlation id belongs to. The records exist only where a
//! trace window was open; rows take them when their row group is written, so a
//! record that comes after its kernel in the dump (another buffer) still counts
//! unless a whole row group was written in between. A re-run of a grown dump reads
//! the records of the chunks it skips too; rows already written keep what they had.

use std::collections::BTreeMap;

use cupmon_records::{ExternalCorrelationKind, ExternalCorrelationRecord};
use rustc_hash::FxHashMap;

use crate::encode::{OptI64Col, OptStrCol, Strings, Sym, U32Col};

/// Correlation id -> external ids, as the records came.
#[derive(Debug, Default)]
pub struct Correlations {
    cpu_op: FxHashMap<u32, i64>,
    annotation: FxHashMap<u32, Sym>,
}

impl Correlations {
    pub fn add(
        &mut self,
        r: &ExternalCorrelationRecord,
        names: &BTreeMap<u64, String>,
        strings: &mut Strings,
    ) {
        if r.correlation_id == 0 {
            return;
        }
        if r.external_kind == ExternalCorrelationKind::CUSTOM0.0 {
            self.cpu_op.insert(r.correlation_id, r.external_id as i64);
        } else if r.external_kind == ExternalCorrelationKind::CUSTOM1.0 {
            if let Some(name) = names.get(&r.external_id) {
                self.annotation
                    .insert(r.correlation_id, strings.intern(name));
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.cpu_op.is_empty() && self.annotation.is_empty()
    }

    /// Fill the rows' `external_id` and `user_annotation` that are still NULL.
    pub fn fill(&self, correlation: &U32Col, external: &mut OptI64Col, annotation: &mut OptStrCol) {
        if self.is_empty() {
            return;
        }
        for (i, &c) in correlation.0.iter().enumerate() {
            if let Some(&id) = self.cpu_op.get(&c) {
                external.fill(i, id);
            }
            if annotation.get(i).is_none() {
                if let Some(&s) = self.annotation.get(&c) {
                    annotation.set(i, s);
                }
            }
        }
    }
}

/// Rows that take external ids when written.
pub trait Correlate {
    fn correlate(&mut self, _c: &Correlations) {}
}
