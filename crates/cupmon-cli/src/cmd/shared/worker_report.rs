//! Why records were dropped, from what the monitor left in the meta: how many
//! buffers were out at most against the cap, and the dump writer's time.

use cupmon_monitor::{BufferUse, MetaEntry, WorkerProfile, SLOW_FLUSH_PERIODS};
use cupmon_records::MetaFile;

/// The buffers and dump-writer lines for `cupmon stats` and the `cupmon run`
/// summary; none for dumps of other writers (PyTorch's monitor, older cupmon).
pub fn lines(meta: &MetaFile) -> Vec<String> {
    let buffers = BufferUse::from_meta(meta).map(|b| buffers_line(&b));
    let worker = WorkerProfile::from_meta(meta).map(|w| worker_line(&w));
    let forced = meta
        .json()
        .get("starvation_flushes")
        .and_then(|v| v.as_u64())
        .filter(|&n| n > 0)
        .map(|n| {
            format!(
                "forced flushes: {n} (CUPTI held every buffer and returned none for a flush \
                 period; kernels still running then have no end time)"
            )
        });
    buffers.into_iter().chain(worker).chain(forced).collect()
}

fn buffers_line(b: &BufferUse) -> String {
    let mib = |n: u64| (n * b.buffer_size) as f64 / (1 << 20) as f64;
    format!(
        "buffers: at most {} of {} lent to CUPTI or waiting at once ({:.0} of {:.0} MiB); \
         {} mapped on request (none was ready)",
        b.max_in_use,
        b.cap,
        mib(b.max_in_use),
        mib(b.cap),
        b.mapped_on_request
    )
}

fn worker_line(w: &WorkerProfile) -> String {
    let s = |ms: u64| ms as f64 / 1e3;
    format!(
        "dump writer: busy {:.2} s of {:.2} s; writing {:.2} s (on a CPU {:.2} s, waiting for a CPU \
         {:.2} s, blocked in the kernel {:.2} s); reading records {:.2} s; at most {} buffers waiting",
        s(w.busy_ms),
        s(w.alive_ms),
        s(w.write_ms),
        s(w.write_on_cpu_ms),
        s(w.write_waiting_for_cpu_ms),
        s(w.write_blocked_ms),
        s(w.read_ms),
        w.max_buffers_waiting,
    )
}

/// The line about CUPTI's longest periodic flush, when it took
/// [`SLOW_FLUSH_PERIODS`] flush periods or more (the monitor warned then too): on the
/// H200 such flushes came before recording stopped, with kernels missing that no drop
/// count shows, so it is printed whether or not records were dropped.
pub fn slow_flush_line(meta: &MetaFile) -> Option<String> {
    let json = meta.json();
    let ms = json.get("flush_longest_ms")?.as_u64()?;
    let period_ms = json.get("flush_period_ms")?.as_u64()?;
    (ms >= period_ms * u64::from(SLOW_FLUSH_PERIODS)).then(|| {
        format!(
            "CUPTI's longest flush took {:.1} s: under sustained full-rate launches CUPTI \
             returns almost no records meanwhile and may stop recording; kernels may be \
             missing without being counted as dropped (a known problem: see the README)",
            ms as f64 / 1e3
        )
    })
}

/// Why records were dropped, with what to change; None when the cap was not
/// reached or the meta does not say.
pub fn drop_hint(meta: &MetaFile) -> Option<&'static str> {
    let buffers = BufferUse::from_meta(meta)?;
    if buffers.max_in_use < buffers.cap {
        return None;
    }
    let writer_behind = WorkerProfile::from_meta(meta).is_some_and(|w| w.busy_ms * 2 >= w.alive_ms);
    Some(if writer_behind {
        "the dump writer fell behind and the buffers ran out: put the dump on a faster disk \
         (CUPMON_OUTPUT_DIR) or allow more buffers (CUPMON_MAX_OUTSTANDING)"
    } else {
        "CUPTI held every buffer the cap allows: allow more with CUPMON_MAX_OUTSTANDING"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(buffers: Option<BufferUse>, worker: Option<WorkerProfile>) -> MetaFile {
        let mut meta = MetaFile::new();
        if let Some(b) = buffers {
            b.write_to(&mut meta);
        }
        if let Some(w) = worker {
            w.write_to(&mut meta);
        }
        meta
    }

    fn buffers(max_in_use: u64, cap: u64) -> BufferUse {
        BufferUse {
            max_in_use,
            cap,
            buffer_size: 4 << 20,
            mapped_on_request: 0,
        }
    }

    fn worker(alive_ms: u64, busy_ms: u64) -> WorkerProfile {
        WorkerProfile {
            alive_ms,
            busy_ms,
            ..WorkerProfile::default()
        }
    }

    #[test]
    fn lines_report_seconds_and_buffers() {
        let w = WorkerProfile {
            alive_ms: 10_000,
            busy_ms: 9_500,
            write_ms: 9_000,
            write_on_cpu_ms: 1_000,
            write_waiting_for_cpu_ms: 500,
            write_blocked_ms: 7_500,
            read_ms: 400,
            max_buffers_waiting: 16,
        };
        let m = meta(Some(buffers(20, 64)), Some(w));
        let lines = lines(&m);
        assert_eq!(
            lines[0],
            "buffers: at most 20 of 64 lent to CUPTI or waiting at once (80 of 256 MiB); \
             0 mapped on request (none was ready)"
        );
        let line = &lines[1];
        assert!(line.contains("busy 9.50 s of 10.00 s"), "{line}");
        assert!(line.contains("blocked in the kernel 7.50 s"), "{line}");
        assert!(line.ends_with("at most 16 buffers waiting"), "{line}");
        assert_eq!(drop_hint(&m), None, "the cap was not reached");
    }

    #[test]
    fn hints_follow_the_profile() {
        let writer = meta(Some(buffers(16, 16)), Some(worker(10_000, 9_000)));
        assert!(drop_hint(&writer)
            .unwrap()
            .starts_with("the dump writer fell behind"));
        let cupti = meta(Some(buffers(16, 16)), Some(worker(10_000, 1_000)));
        assert!(drop_hint(&cupti)
            .unwrap()
            .starts_with("CUPTI held every buffer"));
    }

    #[test]
    fn a_slow_flush_is_named_and_a_quick_one_is_not() {
        let mut m = MetaFile::new();
        assert_eq!(slow_flush_line(&m), None, "older dumps have no such key");
        m.set("flush_longest_ms", 37_293)
            .set("flush_period_ms", 1_000);
        let line = slow_flush_line(&m).expect("slow");
        assert!(
            line.starts_with("CUPTI's longest flush took 37.3 s"),
            "{line}"
        );
        m.set("flush_longest_ms", 4_999);
        assert_eq!(slow_flush_line(&m), None, "under five periods");
        m.set("flush_period_ms", 250);
        assert!(slow_flush_line(&m).is_some(), "five periods of 250 ms");
    }

    #[test]
    fn no_profile_no_line() {
        assert!(lines(&MetaFile::new()).is_empty());
        let mut malformed = MetaFile::new();
        malformed.set("buffers", 3).set("worker", 3);
        assert!(lines(&malformed).is_empty());
        assert_eq!(drop_hint(&malformed), None);
    }
}
