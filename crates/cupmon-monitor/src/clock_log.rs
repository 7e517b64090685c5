//! Samples of CUPTI's clock when another client's timestamp callback has replaced it
//! (torch.profiler does, outside `cupmon run`): pairs of (CUPTI timestamp, Unix ns)
//! taken together, from which windows convert their records and which the meta keeps
//! for offline decoding.

use std::sync::Mutex;

use cupmon_records::{ClockSamples, ForeignClock};

/// At most this many samples are kept; past it every other one is dropped, so the
/// samples keep spanning the whole session (the span is what makes the rate exact).
const MAX_SAMPLES: usize = 512;

#[derive(Debug, Default)]
pub(crate) struct ClockLog {
    samples: Mutex<Vec<(u64, u64)>>,
}

impl ClockLog {
    /// Keep the pair if CUPTI's reading is on another clock than Unix ns.
    pub fn note(&self, cupti_ns: u64, unix_ns: u64) {
        if !cupmon_records::clock::is_foreign(cupti_ns) {
            return;
        }
        let mut samples = self.samples.lock().unwrap_or_else(|p| p.into_inner());
        samples.push((cupti_ns, unix_ns));
        if samples.len() > MAX_SAMPLES {
            let kept: Vec<(u64, u64)> = samples.iter().copied().step_by(2).collect();
            *samples = kept;
        }
    }

    pub fn pairs(&self) -> Vec<(u64, u64)> {
        self.samples
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The line through the samples, if they give one.
    pub fn fit(&self) -> Option<ForeignClock> {
        let mut s = ClockSamples::new();
        for (c, u) in self.pairs() {
            s.add(c, u);
        }
        s.fit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_foreign_samples_and_their_span() {
        let log = ClockLog::default();
        log.note(1_795_979_265_354_826_778, 1_795_979_265_354_828_116);
        assert!(log.pairs().is_empty(), "a Unix reading is not a sample");
        for i in 0..2000u64 {
            log.note(
                1_000_000_000 + i * 2_100_000,
                1_700_000_000_000_000_000 + i * 1_000_000,
            );
        }
        let pairs = log.pairs();
        assert!(pairs.len() <= MAX_SAMPLES);
        assert_eq!(pairs[0].0, 1_000_000_000, "the first sample stays");
        let clock = log.fit().expect("a line");
        assert!((clock.ticks_per_ns() - 2.1).abs() < 1e-6);
    }
}
