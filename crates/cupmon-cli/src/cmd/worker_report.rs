//! The dump writer's time, as the monitor left it in the meta (key `worker`):
//! when records were dropped, this says whether the disk or the CPU was short.

use cupmon_records::MetaFile;
use serde_json::Value;

/// One line for `cupmon stats` and the `cupmon run` summary, or None when the
/// meta has no profile (dumps from PyTorch's monitor or older cupmon).
pub fn worker_line(meta: &MetaFile) -> Option<String> {
    let w = meta.json().get("worker")?.as_object()?;
    let ms = |key: &str| w.get(key).and_then(Value::as_u64).unwrap_or(0);
    let s = |key: &str| ms(key) as f64 / 1e3;
    Some(format!(
        "dump writer: busy {:.2} s of {:.2} s; writing {:.2} s (on a CPU {:.2} s, waiting for a CPU \
         {:.2} s, blocked in the kernel {:.2} s); reading records {:.2} s; at most {} buffers waiting",
        s("busy_ms"),
        s("alive_ms"),
        s("write_ms"),
        s("write_on_cpu_ms"),
        s("write_waiting_for_cpu_ms"),
        s("write_blocked_ms"),
        s("read_ms"),
        ms("max_buffers_waiting"),
    ))
}

/// Why records were dropped, from the same profile, with what to change.
pub fn drop_hint(meta: &MetaFile) -> Option<&'static str> {
    let w = meta.json().get("worker")?.as_object()?;
    let ms = |key: &str| w.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (blocked, cpu_wait, busy, alive) = (
        ms("write_blocked_ms"),
        ms("write_waiting_for_cpu_ms"),
        ms("busy_ms"),
        ms("alive_ms"),
    );
    if busy * 2 < alive {
        // The writer kept up on average: a short burst outran the buffers.
        return Some(
            "a burst outran the buffers; allow more with CUPMON_MAX_OUTSTANDING (default 64M)",
        );
    }
    Some(if blocked >= cpu_wait {
        "the disk did not keep up: put the dump on a faster disk (CUPMON_OUTPUT_DIR) or allow \
         more buffers (CUPMON_MAX_OUTSTANDING, default 64M)"
    } else {
        "the dump writer did not get enough CPU: leave a core free or allow more buffers \
         (CUPMON_MAX_OUTSTANDING, default 64M)"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(worker: Value) -> MetaFile {
        let mut meta = MetaFile::new();
        meta.set("worker", worker);
        meta
    }

    #[test]
    fn line_reports_seconds() {
        let m = meta(
            json!({"alive_ms": 10_000, "busy_ms": 9_500, "write_ms": 9_000,
            "write_on_cpu_ms": 1_000, "write_waiting_for_cpu_ms": 500, "write_blocked_ms": 7_500,
            "read_ms": 400, "max_buffers_waiting": 16}),
        );
        let line = worker_line(&m).unwrap();
        assert!(line.contains("busy 9.50 s of 10.00 s"), "{line}");
        assert!(line.contains("blocked in the kernel 7.50 s"), "{line}");
        assert!(line.ends_with("at most 16 buffers waiting"), "{line}");
        assert!(drop_hint(&m).unwrap().starts_with("the disk"));
    }

    #[test]
    fn hints_follow_the_profile() {
        let cpu = meta(json!({"alive_ms": 10_000, "busy_ms": 9_000,
            "write_waiting_for_cpu_ms": 5_000, "write_blocked_ms": 100}));
        assert!(drop_hint(&cpu).unwrap().contains("enough CPU"));
        let burst = meta(json!({"alive_ms": 10_000, "busy_ms": 1_000}));
        assert!(drop_hint(&burst).unwrap().starts_with("a burst"));
    }

    #[test]
    fn no_profile_no_line() {
        assert_eq!(worker_line(&MetaFile::new()), None);
        assert_eq!(drop_hint(&meta(json!(3))), None);
    }
}
