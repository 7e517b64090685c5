//! What the hang record's per-thread launch ring adds to each launch callback:
//! `inflight::launched` (a coarse clock read, the stream read from the launch's
//! parameters, five relaxed stores into the thread's own slot) timed against the same
//! loop without it, from 1 and from 4 threads at once.
//!
//! usage: cargo run --release -p cupmon-cupti --example launch_ring_cost [CALLS]
#![allow(unsafe_code)]

use std::hint::black_box;
use std::time::Instant;

use cupmon_cupti::launches::ids::{CallbackData, DOMAIN_RUNTIME_API};
use cupmon_cupti::launches::inflight;

fn data(params: &[u64; 7], id: u32) -> CallbackData {
    CallbackData {
        callback_site: 1,
        function_name: std::ptr::null(),
        function_params: params.as_ptr().cast(),
        function_return_value: std::ptr::null_mut(),
        symbol_name: c"_Z4stepv".as_ptr(),
        context: std::ptr::null_mut(),
        context_uid: 1,
        correlation_data: std::ptr::null_mut(),
        correlation_id: id,
    }
}

/// ns per call of `calls` calls on each of `threads` threads (the median thread).
fn time(threads: usize, calls: u32, ring: bool) -> f64 {
    let mut per_call: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    // cudaLaunchKernel's parameters: the stream at byte 48.
                    let params = [0, 0, 0, 0, 0, 0, 0x7000 + t as u64];
                    let start = Instant::now();
                    for id in 0..calls {
                        let d = data(&params, id);
                        if ring {
                            // SAFETY: callback data of a cudaLaunchKernel (211) whose
                            // parameters hold the stream at its offset.
                            unsafe { inflight::launched(DOMAIN_RUNTIME_API, 211, black_box(&d)) };
                        } else {
                            black_box(&d);
                        }
                    }
                    start.elapsed().as_nanos() as f64 / f64::from(calls)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    per_call.sort_by(f64::total_cmp);
    per_call[per_call.len() / 2]
}

fn main() {
    let calls: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000_000);
    println!("calls per thread: {calls}");
    for threads in [1, 4] {
        let mut base = Vec::new();
        let mut ring = Vec::new();
        for _ in 0..5 {
            base.push(time(threads, calls, false));
            ring.push(time(threads, calls, true));
        }
        base.sort_by(f64::total_cmp);
        ring.sort_by(f64::total_cmp);
        println!(
            "threads {threads}: loop alone {:.2} [{:.2}..{:.2}] ns/call, with the ring {:.2} \
             [{:.2}..{:.2}] ns/call, added {:.2} ns (medians of 5)",
            base[2],
            base[0],
            base[4],
            ring[2],
            ring[0],
            ring[4],
            ring[2] - base[2]
        );
    }
    let seen = inflight::threads_seen();
    assert!(seen.last_launch_ns > 0);
}
