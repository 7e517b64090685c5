//! The digest of a slice of a dump: stored digests for the closed segments that lie
//! wholly inside it, the records of the others. What `cupmon stats` and `cupmon report`
//! stand on.
//!
//! The rule every reader follows: a stored digest stands for a segment only when the
//! segment is there, sound ([`crate::dump::SegmentFile::sound`]: the size and first
//! frame its index line and the dump say) and the digest is its own (its checksum in
//! the index line, the dump's id, the segment's number, counts that agree with the
//! index line) and every frame of the segment passes its seal
//! ([`crate::dump::segment_frames_problem`]: a byte flipped between its first and last
//! frames fails its frame's checksum; the compressed bytes are hashed, not decoded).
//! Otherwise the segment's records are read, as `decode` reads them, so `stats`,
//! `report` and `decode` count the same records and warn of the same loss.

use super::verified_marks::VerifiedMarks;
use super::{digest_file_name, stored_digest, Digest, DigestBuilder};
use crate::dump::{
    segment_file_name, segment_frames_problem, DumpWarning, SegmentFile, SegmentSummary,
    SEGMENTS_DIR,
};
use crate::walk::{walk_slice, DecodeProgress, DecodeReport};
use crate::{ActivityKind, Dump, DumpError, TimeRange, Timeline, TimelineBuilder};

/// The bins a summary's timelines are on (all kernels; NCCL's use the same).
pub type SummaryGrid = TimelineBuilder;

/// What [`summarize`] found.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The walk's report, with the counts of the digested segments added.
    pub report: DecodeReport,
    pub digest: Digest,
    /// Segments whose stored digest was used instead of their records.
    pub segments_digested: u64,
    /// The kernels launched in the slice, from the segments' launch counters.
    pub launches: SliceLaunches,
}

/// Kernels launched while the slice's segments were open (see
/// [`super::LaunchCounterSpan`]): known for the segments whose stored digest stands
/// for them and carries the counter; the others in the slice (digests without the
/// counter, segments read from their records: the open one, one the slice cuts) are
/// counted in `segments_not_counted`, and `kernels_launched` is then a lower bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceLaunches {
    pub kernels_launched: u64,
    pub segments_counted: u64,
    pub segments_not_counted: u64,
}

impl SliceLaunches {
    /// The slice's launches when every segment in it was counted.
    pub fn all_counted(&self) -> Option<u64> {
        (self.segments_counted > 0 && self.segments_not_counted == 0)
            .then_some(self.kernels_launched)
    }
}

/// The timelines of a summary on the caller's grid.
#[derive(Debug, Clone)]
pub struct SummaryTimelines {
    /// All kernels.
    pub all: Timeline,
    /// NCCL's kernels alone.
    pub nccl: Timeline,
}

/// Digest the records of `dump` that [`walk_slice`] gives for `range`; see the module
/// docs.
pub fn summarize(
    dump: &Dump,
    range: &TimeRange,
    progress: impl FnMut(&DecodeProgress),
) -> Result<Summary, DumpError> {
    Ok(summarize_with(dump, range, None, progress)?.0)
}

/// [`summarize`], and the timelines of the same records on `grid`.
pub fn summarize_on_grid(
    dump: &Dump,
    range: &TimeRange,
    grid: SummaryGrid,
    progress: impl FnMut(&DecodeProgress),
) -> Result<(Summary, SummaryTimelines), DumpError> {
    let (summary, timelines) = summarize_with(dump, range, Some(grid), progress)?;
    let (all, nccl) = timelines.expect("a builder with a grid gives its timelines");
    Ok((summary, SummaryTimelines { all, nccl }))
}

fn summarize_with(
    dump: &Dump,
    range: &TimeRange,
    grid: Option<SummaryGrid>,
    progress: impl FnMut(&DecodeProgress),
) -> Result<(Summary, Option<(Timeline, Timeline)>), DumpError> {
    let mut stored = Vec::new();
    let mut warnings = Vec::new();
    let mut partial = 0;
    let mut rest = None;
    let mut launches = SliceLaunches::default();
    if let Some(list) = dump.segments() {
        let dir = dump.dir().join(SEGMENTS_DIR);
        let mut walked: Vec<SegmentFile> = Vec::new();
        let mut marks = VerifiedMarks::load(list.dump_id);
        for file in &list.live {
            let digest = match stored_digest(&dir, file, list.dump_id) {
                Ok(d) => d.and_then(|d| file.summary.as_ref().map(|s| (s, d))),
                Err(problem) => {
                    warnings.push(DumpWarning::DigestNotUsed {
                        file: format!("{SEGMENTS_DIR}/{}", digest_file_name(file.segment)),
                        problem,
                    });
                    None
                }
            };
            // A partial digest the slice needed: its records are read instead.
            let needed = |s: &SegmentSummary| match (s.first_ns, s.last_ns) {
                (Some(first), Some(last)) => range.overlaps(first, last),
                _ => true,
            };
            if digest
                .as_ref()
                .is_some_and(|(s, d)| d.skipped > 0 && needed(s))
            {
                partial += 1;
            }
            // The launches of a segment wholly inside the slice, from its digest's
            // counter, even where the digest cannot stand for its records (a finer
            // grid than its second bins, frames that fail their seal).
            let counter = digest
                .as_ref()
                .filter(|(s, d)| usable(d, s, range, None))
                .map(|(_, d)| d.launch_counter);
            match counter {
                Some(Some(span)) => {
                    launches.segments_counted += 1;
                    // Saturating: readings that went back (a forged digest, a
                    // restarted counter) can give spans that add past u64.
                    launches.kernels_launched = launches
                        .kernels_launched
                        .saturating_add(span.kernels_launched());
                }
                Some(None) => launches.segments_not_counted += 1,
                None if file.summary.as_ref().is_none_or(needed) => {
                    launches.segments_not_counted += 1
                }
                None => {}
            }
            match digest.filter(|(s, d)| usable(d, s, range, grid.as_ref())) {
                // Only a segment whose every frame passes its seal: else its records
                // are read, and the frames that fail are warned of as decode does.
                Some((s, d)) => match verified(file, s, list.dump_id, &mut marks) {
                    None => stored.push(d),
                    Some(problem) => {
                        warnings.push(DumpWarning::DigestNotUsed {
                            file: format!("{SEGMENTS_DIR}/{}", digest_file_name(file.segment)),
                            problem: format!(
                                "its segment {SEGMENTS_DIR}/{}: {problem}",
                                segment_file_name(file.segment)
                            ),
                        });
                        walked.push(file.clone());
                    }
                },
                None => walked.push(file.clone()),
            }
        }
        marks.save();
        if !stored.is_empty() {
            rest = Some(dump.with_live_segments(walked));
        }
    }
    let walk_dump = rest.as_ref().unwrap_or(dump);
    let names = dump.kernel_names();
    let mut builder = DigestBuilder::new(grid.map(|g| (g.clone(), g)));
    let mut report = walk_slice(walk_dump, range, progress, |_, _, r| builder.add(r, names))?;
    report.segments_digested = stored.len() as u64;
    report.warnings.extend(warnings);
    report.segments_digest_partial = partial;
    for d in &stored {
        builder.absorb(d);
        report.chunks += d.chunks;
        report.buffer_bytes += d.buffer_bytes;
        report.records += d.records;
        for (&kind, &n) in &d.records_by_kind {
            *report
                .records_by_kind
                .entry(ActivityKind(kind))
                .or_default() += n;
        }
    }
    let (digest, mut timelines) = builder.finish();
    if let Some((all, nccl)) = &mut timelines {
        all.dropped_records = report.dropped_records;
        nccl.dropped_records = report.dropped_records;
    }
    let summary = Summary {
        report,
        digest,
        segments_digested: stored.len() as u64,
        launches,
    };
    Ok((summary, timelines))
}

/// Why `file` (its index line `s`) cannot be trusted: a frame that fails its seal
/// ([`segment_frames_problem`]); `None` when every frame passes, now or at a run that
/// marked the file as it still is (`verified_marks.rs`).
fn verified(
    file: &SegmentFile,
    s: &SegmentSummary,
    dump_id: Option<crate::dump::DumpId>,
    marks: &mut VerifiedMarks,
) -> Option<String> {
    let mark = marks.mark_of(file, s.digest_xxh3.as_deref());
    if mark.as_deref().is_some_and(|m| marks.contains(m)) {
        return None;
    }
    let problem = segment_frames_problem(&file.path, dump_id, file.segment);
    if let (None, Some(mark)) = (&problem, mark) {
        // Unless the file changed while it was read: then it is checked again next time.
        if marks.mark_of(file, s.digest_xxh3.as_deref()).as_ref() == Some(&mark) {
            marks.add(mark);
        }
    }
    problem
}

/// Whether `d`, the stored digest of the segment `s` says, stands for that segment's
/// part of `range` and `grid`.
fn usable(d: &Digest, s: &SegmentSummary, range: &TimeRange, grid: Option<&SummaryGrid>) -> bool {
    if !d.is_whole() || d.records != s.records {
        return false;
    }
    if !range.is_all() {
        // Every record must be in the slice: timed, and inside it.
        let (Some(first), Some(last)) = (d.first_ns, d.last_ns) else {
            return false;
        };
        let inside =
            range.from_ns.is_none_or(|f| first >= f) && range.to_ns.is_none_or(|t| last < t);
        if d.zero_start > 0 || !inside {
            return false;
        }
    }
    match grid {
        Some(g) => g.whole_seconds() && d.unbinned == 0 && d.bins.is_some(),
        None => true,
    }
}
