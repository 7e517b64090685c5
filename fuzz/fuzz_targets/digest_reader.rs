//! A segment's digest from arbitrary bytes, checked against an index line as readers
//! check it ([`check_digest`]), then added into a summary with and without a timeline
//! grid, as `stats` and `report` add stored digests (with the launch counter's
//! readings, `launch_counter`, when the digest has them). Never a panic: a digest that
//! claims absurd numbers is refused or added, not a crash.
#![no_main]

use std::time::Duration;

use cupmon_records::digest::{check_digest, Digest, DigestBuilder};
use cupmon_records::dump::{DumpId, SegmentSummary};
use cupmon_records::TimelineBuilder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    // An index line that agrees with what the digest says (so that the deeper checks
    // run), or one that says little.
    let parsed: Option<Digest> = serde_json::from_slice(bytes).ok();
    let summary = match (&parsed, mode & 1) {
        (Some(d), 0) => SegmentSummary {
            segment: d.segment.unwrap_or(1),
            records: d.records,
            chunks: d.chunks,
            buffer_bytes: d.buffer_bytes,
            kernels: d
                .kernels
                .iter()
                .map(|k| k.launches)
                .fold(0, u64::saturating_add),
            first_ns: d.first_ns,
            last_ns: d.last_ns,
            ..SegmentSummary::default()
        },
        _ => SegmentSummary {
            segment: 1,
            ..SegmentSummary::default()
        },
    };
    let id = (mode & 2 == 0).then_some(DumpId(0x0123_4567_89ab_cdef));
    let checked = check_digest(bytes, summary.segment, &summary, id);
    if let Err(problem) = &checked {
        assert!(!problem.is_empty());
    }
    let Some(digest) = parsed else { return };
    // A segment's launch counter (read as `summarize` reads it): never more launched
    // than the reading at the close, whatever the readings.
    if let Some(span) = digest.launch_counter {
        assert!(span.kernels_launched() <= span.at_close, "{span:?}");
    }
    let grid = TimelineBuilder::new(0, 3_600_000_000_000, Duration::from_secs(1))
        .ok()
        .filter(|_| mode & 4 == 0);
    let mut builder = DigestBuilder::new(grid.map(|g| (g.clone(), g)));
    builder.absorb(&digest);
    builder.absorb(&digest);
    let (sum, _) = builder.finish();
    let _ = serde_json::to_vec(&sum);
});
