//! The time range of a merged trace, for the rebuilt "PyTorch Profiler (0)"
//! span, computed with Python's `min`/`max` semantics (NaN never wins).

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TimeRange {
    pub min_ts: f64,
    pub max_end_ts: f64,
}

impl Default for TimeRange {
    fn default() -> Self {
        Self {
            min_ts: f64::INFINITY,
            max_end_ts: 0.0,
        }
    }
}

/// Python's `max(a, b)`: `b` only if `b > a`.
#[inline]
pub(crate) fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Python's `min(a, b)`: `b` only if `b < a`.
#[inline]
pub(crate) fn py_min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

impl TimeRange {
    /// Account for one `X` event (`cat != "Trace"`).
    #[inline]
    pub fn add(&mut self, ts: f64, dur: f64) {
        self.min_ts = py_min(self.min_ts, ts);
        self.max_end_ts = py_max(self.max_end_ts, ts + py_max(dur, 0.0));
    }

    /// Combine with a range computed over later events, in PyTorch's merge's order.
    pub fn then(self, later: TimeRange) -> TimeRange {
        TimeRange {
            min_ts: py_min(self.min_ts, later.min_ts),
            max_end_ts: py_max(self.max_end_ts, later.max_end_ts),
        }
    }

    /// False when there was no duration event at all (PyTorch's merge raises).
    pub fn has_events(&self) -> bool {
        self.min_ts.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_never_wins() {
        let mut r = TimeRange::default();
        r.add(f64::NAN, 1.0);
        r.add(5.0, f64::NAN);
        r.add(3.0, 1.0);
        assert_eq!(r.min_ts, 3.0);
        assert_eq!(r.max_end_ts, 4.0);
    }
}
