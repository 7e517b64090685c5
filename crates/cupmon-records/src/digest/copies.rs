//! Memory copies for the report: by direction and memory kinds (Kineto's
//! `Memcpy HtoD (Pinned -> Device)`), largest total first, and the largest single
//! copies with when they ran. The bytes of all groups add up to `cupmon stats`'
//! `memcpy bytes` (every copy counts; those without times have no duration).

use serde::{Deserialize, Serialize};

use crate::MemcpyRecord;

/// How many single copies [`CopyStats::largest`] keeps.
pub const LARGEST: usize = 10;

/// The copies of one direction and pair of memory kinds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyGroup {
    pub copy_kind: u8,
    pub src_kind: u8,
    pub dst_kind: u8,
    pub count: u64,
    pub bytes: u64,
    /// Sum of the durations of the copies with both timestamps.
    pub timed_ns: u64,
    /// Bytes of the copies with both timestamps (for the bandwidth).
    pub timed_bytes: u64,
}

impl CopyGroup {
    /// `Memcpy HtoD (Pinned -> Device)`.
    pub fn label(&self) -> String {
        format!(
            "Memcpy {} ({} -> {})",
            copy_kind_name(self.copy_kind),
            memory_kind_name(self.src_kind),
            memory_kind_name(self.dst_kind)
        )
    }

    /// Bytes per second while copying, `None` without timed copies.
    pub fn bandwidth(&self) -> Option<f64> {
        (self.timed_ns > 0).then(|| self.timed_bytes as f64 * 1e9 / self.timed_ns as f64)
    }
}

/// One copy, for the largest ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OneCopy {
    pub bytes: u64,
    pub start: u64,
    pub end: u64,
    pub copy_kind: u8,
    pub device: u32,
    pub stream: u32,
    /// Which process of the report (0 within one process's stats).
    pub process: usize,
}

/// A process's copies.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyStats {
    /// Largest bytes first.
    pub groups: Vec<CopyGroup>,
    /// Largest first, at most [`LARGEST`]; equal sizes: the earlier first.
    pub largest: Vec<OneCopy>,
}

impl CopyStats {
    pub fn add(&mut self, m: &MemcpyRecord) {
        let key = (m.copy_kind, m.src_kind, m.dst_kind);
        let i = match self
            .groups
            .iter()
            .position(|g| (g.copy_kind, g.src_kind, g.dst_kind) == key)
        {
            Some(i) => i,
            None => {
                self.groups.push(CopyGroup {
                    copy_kind: m.copy_kind,
                    src_kind: m.src_kind,
                    dst_kind: m.dst_kind,
                    count: 0,
                    bytes: 0,
                    timed_ns: 0,
                    timed_bytes: 0,
                });
                self.groups.len() - 1
            }
        };
        let g = &mut self.groups[i];
        g.count += 1;
        g.bytes += m.bytes;
        if m.start != 0 && m.end > m.start {
            g.timed_ns += m.end - m.start;
            g.timed_bytes += m.bytes;
        }
        let one = OneCopy {
            bytes: m.bytes,
            start: m.start,
            end: m.end,
            copy_kind: m.copy_kind,
            device: m.device_id,
            stream: m.stream_id,
            process: 0,
        };
        self.keep_large(one);
    }

    fn keep_large(&mut self, one: OneCopy) {
        let full = self.largest.len() >= LARGEST;
        if full && self.largest.last().is_some_and(|l| !larger(&one, l)) {
            return;
        }
        let at = self.largest.partition_point(|l| larger(l, &one));
        self.largest.insert(at, one);
        self.largest.truncate(LARGEST);
    }

    /// Add the copies of process number `process`.
    pub fn merge(&mut self, other: &CopyStats, process: usize) {
        for o in &other.groups {
            match self.groups.iter_mut().find(|g| {
                (g.copy_kind, g.src_kind, g.dst_kind) == (o.copy_kind, o.src_kind, o.dst_kind)
            }) {
                Some(g) => {
                    g.count += o.count;
                    g.bytes += o.bytes;
                    g.timed_ns += o.timed_ns;
                    g.timed_bytes += o.timed_bytes;
                }
                None => self.groups.push(o.clone()),
            }
        }
        for &one in &other.largest {
            self.keep_large(OneCopy { process, ..one });
        }
        self.sort();
    }

    /// Largest bytes first (then by label, for a stable page).
    pub fn sort(&mut self) {
        self.groups.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then_with(|| a.label().cmp(&b.label()))
        });
    }

    pub fn bytes(&self) -> u64 {
        self.groups.iter().map(|g| g.bytes).sum()
    }
}

fn larger(a: &OneCopy, b: &OneCopy) -> bool {
    use std::cmp::Reverse;
    (a.bytes, Reverse(a.start), Reverse(a.process))
        > (b.bytes, Reverse(b.start), Reverse(b.process))
}

/// `CUpti_ActivityMemcpyKind`, as Kineto names it.
pub fn copy_kind_name(kind: u8) -> &'static str {
    crate::copy_kind_word(kind.into()).unwrap_or("Unknown")
}

/// `CUpti_ActivityMemoryKind`, as Kineto names it.
pub fn memory_kind_name(kind: u8) -> &'static str {
    crate::memory_kind_title(kind.into()).unwrap_or("Unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(bytes: u64, start: u64, kind: u8) -> MemcpyRecord {
        MemcpyRecord {
            copy_kind: kind,
            src_kind: 2,
            dst_kind: 3,
            bytes,
            start,
            end: start + 1000,
            ..MemcpyRecord::default()
        }
    }

    #[test]
    fn groups_add_up_and_the_largest_are_kept_in_order() {
        let mut s = CopyStats::default();
        for i in 0..30u64 {
            s.add(&copy(
                1000 + (i % 7) * 100,
                10 + i,
                if i % 2 == 0 { 1 } else { 2 },
            ));
        }
        s.sort();
        assert_eq!(s.groups.len(), 2);
        assert!(s.groups[0].bytes > s.groups[1].bytes);
        assert_eq!(s.groups[1].label(), "Memcpy HtoD (Pinned -> Device)");
        assert_eq!(
            s.bytes(),
            (0..30u64).map(|i| 1000 + (i % 7) * 100).sum::<u64>()
        );
        assert_eq!(s.largest.len(), LARGEST);
        assert_eq!(s.largest[0].bytes, 1600);
        assert_eq!(s.largest[0].start, 16, "the earlier of equal sizes first");
        assert!(s.largest.windows(2).all(|w| w[0].bytes >= w[1].bytes));
        let bw = s.groups[0].bandwidth().expect("timed");
        assert!((bw - s.groups[0].bytes as f64 * 1e9 / (15.0 * 1000.0)).abs() < 1e-3);
        let mut twice = s.clone();
        twice.merge(&s, 1);
        assert_eq!(twice.bytes(), 2 * s.bytes());
        assert_eq!(twice.largest[0].bytes, 1600);
        assert_eq!((twice.largest[0].process, twice.largest[1].process), (0, 1));
    }
}
