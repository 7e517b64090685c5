//! NVTX ranges and marks on their CPU threads, for windows (`cupmon_window::CpuAnnotation`).
//!
//! A range opens with its annotation ([`Monitor::push_range`]): its start, thread and
//! attributes ride in the open-annotation entry the push already writes under the
//! annotations lock, so no lock or allocation is added to a push. A range that closes
//! while a window is prepared or open is kept, complete, until the window ends
//! ([`Monitor::range_closed`]); ranges still open then are drawn to the window's end,
//! flagged. Outside windows a close keeps nothing, and the caller reads no clock
//! ([`Monitor::wants_ranges`]). Marks are kept only in windows; outside them a mark
//! costs one atomic load.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cupmon_window::{rgb_hex, CpuAnnotation, CpuAnnotationKind};

use super::{lock, Monitor};
use crate::MonitorError;

/// Most ranges and marks one window keeps; more are counted and left out.
pub(crate) const MAX_PER_WINDOW: usize = 1 << 20;

/// An NVTX event's category: none (0), its number, or the name registered for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RangeCategory {
    #[default]
    None,
    Number(u32),
    Named(&'static str),
}

/// What NVTX said of a range or mark besides its name. `&'static`: NVTX domains and
/// registered category names live as long as the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RangeAttributes {
    /// `None` for NVTX's default domain.
    pub domain: Option<&'static str>,
    pub category: RangeCategory,
    /// ARGB, when the attributes carry one.
    pub color: Option<u32>,
}

/// A range's CPU side at its opening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeStart {
    /// OS thread id (what API records carry).
    pub thread_id: u32,
    /// Unix ns (CLOCK_REALTIME: CUPTI's default clock); 0 when opened outside
    /// windows (drawn from the window's start, flagged).
    pub start_ns: u64,
    /// Ranges open below it on the thread.
    pub depth: u32,
    pub attributes: RangeAttributes,
}

/// A range closed, or a mark made, in a window: kept as it came (the name shared, no
/// allocation but the vector's growth) until the window ends.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    pub kind: CpuAnnotationKind,
    pub name: Arc<str>,
    pub start: RangeStart,
    pub end_ns: u64,
    pub external_id: Option<u64>,
}

impl Kept {
    pub fn annotation(&self) -> CpuAnnotation {
        annotation(
            self.kind,
            &self.name,
            &self.start,
            self.end_ns,
            self.external_id,
        )
    }
}

/// The ranges and marks a window keeps (in `AnnotationNames`, under its lock).
#[derive(Debug, Default)]
pub(crate) struct WindowRanges {
    pub done: Vec<Kept>,
    /// Left out past [`MAX_PER_WINDOW`].
    pub dropped: u64,
}

impl WindowRanges {
    pub fn keep(&mut self, a: Kept) {
        if self.done.len() < MAX_PER_WINDOW {
            self.done.push(a);
        } else {
            self.dropped += 1;
        }
    }
}

/// The window entry of a range or mark (`process_id` is the window's to fill).
pub(crate) fn annotation(
    kind: CpuAnnotationKind,
    name: &str,
    start: &RangeStart,
    end_ns: u64,
    external_id: Option<u64>,
) -> CpuAnnotation {
    let a = start.attributes;
    CpuAnnotation {
        kind,
        name: name.to_owned(),
        process_id: 0,
        thread_id: start.thread_id,
        start_ns: start.start_ns,
        end_ns: end_ns.max(start.start_ns),
        depth: start.depth,
        domain: a.domain.map(str::to_owned),
        category: match a.category {
            RangeCategory::None => None,
            RangeCategory::Number(n) => Some(n.to_string()),
            RangeCategory::Named(n) => Some(n.to_owned()),
        },
        color: a.color.map(rgb_hex),
        external_id,
        open_at_window_start: false,
        open_at_window_end: false,
    }
}

/// The window's ranges: those kept, plus `open` (still open: drawn to `end_ns`),
/// those ended before `start_ns` left out, those begun before it drawn from it; each
/// with this process's id; in start order.
pub(crate) fn window_ranges(
    mut done: Vec<CpuAnnotation>,
    open: impl Iterator<Item = CpuAnnotation>,
    (start_ns, end_ns): (u64, u64),
) -> Vec<CpuAnnotation> {
    done.extend(open.map(|mut a| {
        a.end_ns = end_ns.max(a.start_ns);
        a.open_at_window_end = true;
        a
    }));
    let pid = std::process::id();
    done.retain(|a| a.end_ns >= start_ns && a.start_ns <= end_ns);
    for a in &mut done {
        a.process_id = pid;
        if a.start_ns < start_ns {
            a.start_ns = start_ns;
            a.open_at_window_start = true;
        }
    }
    done.sort_by_key(|a| (a.thread_id, a.start_ns, a.depth));
    done
}

/// The current time on the clock ranges use: CLOCK_REALTIME in ns (a vDSO read, no
/// system call), the clock of CUPTI's records unless another client changed it.
pub fn range_clock_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Monitor {
    /// Append a window's ranges and marks to the dump's `cpu_annotations.jsonl`, so
    /// that traces made from the dump draw them too.
    pub(super) fn log_cpu_annotations(&self, annotations: &[CpuAnnotation]) {
        let mut lines = Vec::new();
        for a in annotations {
            if serde_json::to_writer(&mut lines, a).is_ok() {
                lines.push(b'\n');
            }
        }
        let dir = &self.shared.config.dump_dir;
        if let Err(e) = cupmon_records::dump::append_cpu_annotation_lines(dir, &lines) {
            cupmon_log::warn!(
                "{}: {e}: this window's NVTX ranges are in its own trace only, not in traces \
                 made from the dump",
                dir.display()
            );
        }
    }

    /// [`Monitor::push_shared_annotation`] for an NVTX range: its CPU side (`start`)
    /// is kept with it, for windows. Close it with [`Monitor::pop_shared_annotation`]
    /// then [`Monitor::range_closed`].
    pub fn push_range(&self, name: &Arc<str>, start: RangeStart) -> Result<u64, MonitorError> {
        self.push_named_with(name, false, Some(start))
    }

    /// The range `id` ended at `end_ns`: in a window, kept for it.
    pub fn range_closed(&self, id: u64, end_ns: u64) {
        lock(&self.annotations).closed_at(id, Some(end_ns));
    }

    /// Whether a window is prepared or open: marks are kept only then, and ranges need
    /// their times only then (a range opened before is drawn from the window's start;
    /// one closed outside windows is not drawn).
    #[inline]
    pub fn wants_ranges(&self) -> bool {
        self.ranges_wanted.load(Ordering::Relaxed)
    }

    /// An NVTX mark (an instant on its thread); kept when a window is prepared or open.
    pub fn mark(&self, name: &Arc<str>, at: RangeStart) {
        if !self.wants_ranges() {
            return;
        }
        lock(&self.annotations).keep_mark(Kept {
            kind: CpuAnnotationKind::Mark,
            name: name.clone(),
            start: at,
            end_ns: at.start_ns,
            external_id: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(name: &str, start_ns: u64, end_ns: u64) -> CpuAnnotation {
        let start = RangeStart {
            thread_id: 9,
            start_ns,
            depth: 0,
            attributes: RangeAttributes {
                domain: Some("d"),
                category: RangeCategory::Named("io"),
                color: Some(0xff102030),
            },
        };
        annotation(CpuAnnotationKind::Range, name, &start, end_ns, Some(1))
    }

    #[test]
    fn ranges_open_at_either_end_of_the_window_are_drawn_to_it_and_flagged() {
        let done = vec![
            range("before", 10, 20),
            range("inside", 120, 130),
            // Opened outside windows: no time was read (0).
            range("across start", 0, 150),
        ];
        let open = [range("still open", 160, 0), range("all along", 0, 0)];
        let got = window_ranges(done, open.into_iter(), (100, 200));
        let shown: Vec<(&str, u64, u64, bool, bool)> = got
            .iter()
            .map(|a| {
                let flags = (a.open_at_window_start, a.open_at_window_end);
                (a.name.as_str(), a.start_ns, a.end_ns, flags.0, flags.1)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("across start", 100, 150, true, false),
                ("all along", 100, 200, true, true),
                ("inside", 120, 130, false, false),
                ("still open", 160, 200, false, true),
            ]
        );
        assert!(got.iter().all(|a| a.process_id == std::process::id()));
        assert_eq!(got[0].domain.as_deref(), Some("d"));
        assert_eq!(got[0].category.as_deref(), Some("io"));
        assert_eq!(got[0].color.as_deref(), Some("#102030"));
    }
}
