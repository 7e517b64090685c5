//! One job per dump, `threads` dumps at a time: the ranks of a run are read at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cupmon_records::Dump;

/// `f(dump)` for every dump, at most `threads` (at least 1) at a time; results in the
/// dumps' order.
pub fn each_dump<T: Send>(dumps: &[Dump], threads: usize, f: impl Fn(&Dump) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..dumps.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, dumps.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(d) = dumps.get(i) else { break };
                let r = f(d);
                results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.expect("every dump was read"))
        .collect()
}
