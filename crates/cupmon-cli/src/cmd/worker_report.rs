//! Why records were dropped, from what the monitor left in the meta: the
//! buffers CUPTI held at most (keys `max_buffers_in_use`, `max_buffers`) and
//! the dump writer's time (key `worker`).

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

/// The buffers line: how many CUPTI held at most, against the cap.
pub fn buffers_line(meta: &MetaFile) -> Option<String> {
    let get = |key: &str| meta.json().get(key).and_then(Value::as_u64);
    let (in_use, cap) = (get("max_buffers_in_use")?, get("max_buffers")?);
    let mib = get("buffer_size").unwrap_or(0) as f64 / (1 << 20) as f64;
    let mapped = get("buffers_mapped_on_request").unwrap_or(0);
    Some(format!(
        "buffers: at most {in_use} of {cap} lent to CUPTI or waiting at once ({:.0} of {:.0} MiB); \
         {mapped} mapped on request (none was ready)",
        in_use as f64 * mib,
        cap as f64 * mib
    ))
}

/// Why records were dropped, with what to change.
pub fn drop_hint(meta: &MetaFile) -> Option<&'static str> {
    let get = |key: &str| meta.json().get(key).and_then(Value::as_u64);
    if let (Some(in_use), Some(cap)) = (get("max_buffers_in_use"), get("max_buffers")) {
        if in_use >= cap {
            let w = meta.json().get("worker").and_then(Value::as_object);
            let ms = |key: &str| w.and_then(|w| w.get(key)).and_then(Value::as_u64);
            let writer_behind =
                matches!((ms("busy_ms"), ms("alive_ms")), (Some(b), Some(a)) if b * 2 >= a);
            return Some(if writer_behind {
                "the dump writer fell behind and the buffers ran out: put the dump on a faster disk \
                 (CUPMON_OUTPUT_DIR) or allow more buffers (CUPMON_MAX_OUTSTANDING)"
            } else {
                "CUPTI held every buffer the cap allows (it completes them in batches): allow more \
                 with CUPMON_MAX_OUTSTANDING"
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(pairs: Value) -> MetaFile {
        let mut meta = MetaFile::new();
        for (k, v) in pairs.as_object().unwrap() {
            meta.set(k, v.clone());
        }
        meta
    }

    #[test]
    fn lines_report_seconds_and_buffers() {
        let m = meta(
            json!({"buffer_size": 4 << 20, "max_buffers_in_use": 20, "max_buffers": 64,
            "worker": {"alive_ms": 10_000, "busy_ms": 9_500, "write_ms": 9_000,
            "write_on_cpu_ms": 1_000, "write_waiting_for_cpu_ms": 500, "write_blocked_ms": 7_500,
            "read_ms": 400, "max_buffers_waiting": 16}}),
        );
        let line = worker_line(&m).unwrap();
        assert!(line.contains("busy 9.50 s of 10.00 s"), "{line}");
        assert!(line.contains("blocked in the kernel 7.50 s"), "{line}");
        assert!(line.ends_with("at most 16 buffers waiting"), "{line}");
        assert_eq!(
            buffers_line(&m).unwrap(),
            "buffers: at most 20 of 64 lent to CUPTI or waiting at once (80 of 256 MiB); \
             0 mapped on request (none was ready)"
        );
        assert_eq!(drop_hint(&m), None, "the cap was not reached");
    }

    #[test]
    fn hints_follow_the_profile() {
        let writer = meta(json!({"max_buffers_in_use": 16, "max_buffers": 16,
            "worker": {"alive_ms": 10_000, "busy_ms": 9_000}}));
        assert!(drop_hint(&writer)
            .unwrap()
            .starts_with("the dump writer fell behind"));
        let cupti = meta(json!({"max_buffers_in_use": 16, "max_buffers": 16,
            "worker": {"alive_ms": 10_000, "busy_ms": 1_000}}));
        assert!(drop_hint(&cupti)
            .unwrap()
            .starts_with("CUPTI held every buffer"));
    }

    #[test]
    fn no_profile_no_line() {
        assert_eq!(worker_line(&MetaFile::new()), None);
        assert_eq!(buffers_line(&MetaFile::new()), None);
        assert_eq!(drop_hint(&meta(json!({"worker": 3}))), None);
    }
}
