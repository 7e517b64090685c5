//! A time slice of a dump: `[from, to)` in Unix ns, either end open.

/// `[from, to)` in Unix ns; `None` ends are open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeRange {
    pub from_ns: Option<u64>,
    pub to_ns: Option<u64>,
}

impl TimeRange {
    pub fn new(from_ns: Option<u64>, to_ns: Option<u64>) -> Self {
        Self { from_ns, to_ns }
    }

    /// Whether the interval `[start, end]` overlaps the range: it starts before `to`
    /// and ends after `from` (an instant, `start == end`, at `from` counts; an
    /// interval that ends exactly at `from` does not).
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        let end = end.max(start);
        let before_to = self.to_ns.is_none_or(|to| start < to);
        let after_from = self
            .from_ns
            .is_none_or(|from| end > from || (start == end && start >= from));
        before_to && after_from
    }

    /// Whether both ends are open (the whole dump).
    pub fn is_all(&self) -> bool {
        self.from_ns.is_none() && self.to_ns.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::TimeRange;

    #[test]
    fn overlap_is_half_open() {
        let r = TimeRange::new(Some(100), Some(200));
        assert!(r.overlaps(50, 150));
        assert!(r.overlaps(150, 250));
        assert!(r.overlaps(100, 100), "an instant at from is in");
        assert!(!r.overlaps(200, 200), "an instant at to is out");
        assert!(!r.overlaps(50, 100), "an interval ending at from is out");
        assert!(r.overlaps(50, 101));
        assert!(!r.overlaps(200, 300));
        assert!(r.overlaps(0, 1000));
        assert!(TimeRange::default().overlaps(0, 0));
    }
}
