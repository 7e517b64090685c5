//! `digest-cost [MILLIONS (default 20)] [REPS (default 5)]`: the dump writer's cost of
//! digesting records ([`cupmon_records::digest::DigestBuilder::add`]) per record, on
//! kernels shaped like the GPU burst benchmark (8 streams of sub-microsecond kernels,
//! interleaved as CUPTI's per-thread buffers deliver them) and like a training job (a
//! few hundred names on two streams, one NCCL kernel in 40). Prints ns per record for
//! each repetition, the median, min and max; one core, no I/O.

use std::time::{Duration, Instant};

use cupmon_records::digest::DigestBuilder;
use cupmon_records::{ActivityKind, KernelNameTable, KernelRecord, Record};

fn kernel(stream: u32, start: u64, end: u64, ptr: u64) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end,
        device_id: 0,
        context_id: 1,
        stream_id: stream,
        grid_x: 1,
        grid_y: 1,
        grid_z: 1,
        block_x: 1,
        block_y: 1,
        block_z: 1,
        name_ptr: ptr,
        ..KernelRecord::default()
    })
}

/// Burst: buffers of 2,000 records per stream, 8 streams, each stream's kernels 0.9 us
/// long every 6 us; the buffers of the 8 streams arrive in turn.
fn burst(n: usize) -> Vec<Record> {
    let t0 = 1_796_133_600_000_000_000u64;
    let mut out = Vec::with_capacity(n);
    let mut next = [t0; 8];
    while out.len() < n {
        for (s, t) in next.iter_mut().enumerate() {
            for _ in 0..2000 {
                out.push(kernel(7 + s as u32, *t, *t + 900, 0x7f00_0000));
                *t += 6000;
            }
        }
    }
    out.truncate(n);
    out
}

/// Training: 300 names, 40 kernels a step on stream 7, then an NCCL kernel on stream 20.
fn training(n: usize) -> Vec<Record> {
    let t0 = 1_796_133_600_000_000_000u64;
    let mut out = Vec::with_capacity(n);
    let mut t = t0;
    let mut i = 0u64;
    while out.len() < n {
        for _ in 0..40 {
            let ptr = 0x7f00_0000 + (i * 7919 % 300) * 0x40;
            out.push(kernel(7, t, t + 20_000, ptr));
            t += 25_000;
            i += 1;
        }
        out.push(kernel(20, t, t + 200_000, 0x7e00_0000));
        t += 210_000;
    }
    out.truncate(n);
    out
}

fn names() -> KernelNameTable {
    let mut names = KernelNameTable::new();
    for f in 0..300u64 {
        let name = format!("train_kernel_{f}");
        names.insert(0x7f00_0000 + f * 0x40, format!("_Z{}{name}Pfi", name.len()));
    }
    let nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
    names.insert(
        0x7e00_0000,
        format!("_Z{}{nccl}24ncclDevKernelArgsStorageILm4096EE", nccl.len()),
    );
    names
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let millions: usize = args.get(1).map_or(20, |s| s.parse().expect("MILLIONS"));
    let reps: usize = args.get(2).map_or(5, |s| s.parse().expect("REPS"));
    let names = names();
    for (label, records) in [
        ("burst", burst(millions * 1_000_000)),
        ("training", training(millions * 1_000_000)),
    ] {
        let mut ns = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            let mut b = DigestBuilder::for_segment(Duration::from_secs(600));
            for r in &records {
                b.add(r, &names);
            }
            let (digest, _) = b.finish();
            let elapsed = t.elapsed();
            assert_eq!(digest.records as usize, records.len());
            ns.push(elapsed.as_nanos() as f64 / records.len() as f64);
        }
        let mut sorted = ns.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "{label}: {} records, ns per record {:?}; median {:.1} [{:.1}..{:.1}]",
            records.len(),
            ns.iter()
                .map(|x| (x * 10.0).round() / 10.0)
                .collect::<Vec<_>>(),
            sorted[reps / 2],
            sorted[0],
            sorted[reps - 1]
        );
    }
}
