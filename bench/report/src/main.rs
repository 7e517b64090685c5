//! `make-run OUT RANKS SECONDS [STEP_MS]`: a synthetic `cupmon run` output directory of
//! a data-parallel training job, one segmented dump per rank (what `cupmon run` writes
//! under torchrun: `rank<R>-<pid>-<start>`), for `cupmon report`'s benchmark, its size
//! check (24 hours of 8 ranks) and the README's screenshot.
//!
//! The job: steps of 40 compute kernels (10 functions) on stream 7 and one NCCL
//! all-reduce on stream 20 that ends, on every rank, when the last rank has reached it
//! (so the others wait in it); a 1 MiB host-to-device copy per step. Rank 2 (when there
//! is one) computes 60% slower from 40% to 55% of the run (a straggler), and every
//! rank stalls 400 ms before each step from 70% to 75% (an input pipeline stall). Rank
//! 0 has one trace window at 20% of the run. Starts at 2026-12-01T14:00:00Z.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cupmon_records::dump::{BufferCompletion, FrameIndex, SegmentPolicy};
use cupmon_records::{
    ActivityKind, DumpWriter, KernelRecord, Layout, MemcpyRecord, MetaFile, Record, RecordWriter,
};

const T0: u64 = 1_796_133_600_000_000_000;
const BUFFER: usize = 4 << 20;
const COMPUTE: u64 = 40;
const FUNCTIONS: u64 = 10;
const NCCL_PTR: u64 = 0x7e00_0000;

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    // --stored: frames stored uncompressed (216 bytes a kernel), so that a dump of
    // 20 GB takes minutes to make; the digests are the same either way.
    let stored = args.iter().any(|a| a == "--stored");
    args.retain(|a| a != "--stored");
    if args.len() < 4 {
        eprintln!("usage: make-run OUT RANKS SECONDS [STEP_MS (default 100)] [--stored]");
        std::process::exit(2);
    }
    let out = PathBuf::from(&args[1]);
    let ranks: u32 = args[2].parse().expect("RANKS");
    let seconds: f64 = args[3].parse().expect("SECONDS");
    let step_ms: f64 = args.get(4).map_or(100.0, |s| s.parse().expect("STEP_MS"));
    let end = T0 + (seconds * 1e9) as u64;
    let mut writers: Vec<Rank> = (0..ranks)
        .map(|r| Rank::create(&out, r, ranks, stored))
        .collect();
    let compute_ns = (step_ms * 0.8e6) as u64;
    let mut t = T0 + 1_000_000;
    let mut step = 0u64;
    let mut corr = 0u32;
    while t < end {
        let at = (t - T0) as f64 / (end - T0) as f64;
        if (0.70..0.75).contains(&at) {
            t += 400_000_000;
        }
        // Each rank's compute ends at its own time; the all-reduce ends for all at once.
        let mut arrive = Vec::with_capacity(writers.len());
        for (r, w) in writers.iter_mut().enumerate() {
            let slow = r == 2 && (0.40..0.55).contains(&at);
            let factor = if slow { 1.6 } else { 1.0 };
            let jitter = 1.0 + (mix(step * 31 + r as u64) % 1000) as f64 / 20_000.0;
            let mut k = t;
            corr += 1;
            w.push(Record::Memcpy(MemcpyRecord {
                kind: ActivityKind::MEMCPY,
                copy_kind: 1,
                src_kind: 2,
                dst_kind: 3,
                bytes: 1 << 20,
                start: k,
                end: k + 40_000,
                device_id: r as u32,
                context_id: 1,
                stream_id: 7,
                correlation_id: corr,
                ..MemcpyRecord::default()
            }));
            k += 50_000;
            for i in 0..COMPUTE {
                let f = (i * 7 + step) % FUNCTIONS;
                let share = (f + 1) as f64 / 5.5;
                let dur = ((compute_ns as f64 / COMPUTE as f64) * share * factor * jitter) as u64;
                corr += 1;
                w.push(kernel(
                    r as u32,
                    7,
                    k,
                    k + dur,
                    0x7f00_0000 + f * 0x40,
                    corr,
                ));
                k += dur + 2_000;
            }
            arrive.push(k);
        }
        let done = arrive.iter().copied().max().unwrap_or(t) + (step_ms * 0.1e6) as u64;
        for (r, w) in writers.iter_mut().enumerate() {
            corr += 1;
            w.push(kernel(r as u32, 20, arrive[r], done, NCCL_PTR, corr));
        }
        t = done + 1_000_000;
        step += 1;
    }
    let mut kernels = 0;
    for w in writers {
        kernels += w.finish();
    }
    println!(
        "{}: {ranks} ranks, {step} steps, {kernels} kernels over {seconds} s",
        out.display()
    );
}

fn kernel(device: u32, stream: u32, start: u64, end: u64, name_ptr: u64, corr: u32) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end,
        completed: end,
        device_id: device,
        context_id: 1,
        stream_id: stream,
        grid_x: 256,
        grid_y: 1,
        grid_z: 1,
        block_x: 256,
        block_y: 1,
        block_z: 1,
        registers_per_thread: 32,
        correlation_id: corr,
        name_ptr,
        ..KernelRecord::default()
    })
}

/// One rank's dump being written.
struct Rank {
    w: DumpWriter,
    meta: MetaFile,
    buf: RecordWriter,
    index: FrameIndex,
    chunks: u64,
    kernels: u64,
    window: Option<(u64, u64)>,
    dir: PathBuf,
    stored: bool,
}

impl Rank {
    fn create(out: &Path, rank: u32, ranks: u32, stored: bool) -> Self {
        let pid = 4000 + rank;
        let dir = out.join(format!("rank{rank}-{pid}-20261201T140000Z"));
        let mut meta = MetaFile::new();
        meta.set("cupti_version", 130_000)
            .set("buffer_size", BUFFER as u64)
            .set("pid", pid)
            .set("rank", rank.to_string())
            .set(
                "distributedInfo",
                serde_json::json!({"backend": "nccl", "rank": rank, "world_size": ranks}),
            )
            .set("command", vec!["python", "train.py", "--synthetic"])
            .set("host", "node1")
            .set(
                "device_properties",
                serde_json::json!([{"id": rank, "name": "NVIDIA H200 (synthetic)",
                    "totalGlobalMem": 150_110_011_392u64, "computeMajor": 9, "computeMinor": 0,
                    "numSms": 132}]),
            )
            .set("session_open", true)
            .set("dropped_records", 0)
            .set("chunks_written", 0);
        let policy = SegmentPolicy {
            segment_size: 64 << 20,
            segment_period: Duration::from_secs(3600),
            keep: u64::MAX / 4,
            keep_for: None,
        };
        let mut w = DumpWriter::create_segmented(&dir, &meta, policy).expect("create the dump");
        for f in 0..FUNCTIONS {
            let name = format!("train_kernel_{f}");
            w.add_kernel_name(
                0x7f00_0000 + f * 0x40,
                &format!("_Z{}{name}Pfi", name.len()),
            )
            .expect("kernel name");
        }
        let nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
        w.add_kernel_name(
            NCCL_PTR,
            &format!("_Z{}{nccl}24ncclDevKernelArgsStorageILm4096EE", nccl.len()),
        )
        .expect("kernel name");
        Self {
            w,
            meta,
            buf: RecordWriter::with_capacity(Layout::cupti_13_0(), BUFFER),
            index: FrameIndex::default(),
            chunks: 0,
            kernels: 0,
            window: (rank == 0).then_some((u64::MAX, 0)),
            dir,
            stored,
        }
    }

    fn push(&mut self, record: Record) {
        if self.buf.len() + 256 > BUFFER {
            self.flush();
        }
        if let Record::Kernel(k) = &record {
            self.kernels += 1;
            if let Some(w) = &mut self.window {
                w.0 = w.0.min(k.start);
                w.1 = w.1.max(k.end);
            }
        }
        self.index.add(&record);
        // As cupmon's monitor does: each record into its segment's digest.
        self.w.digest_record(&record);
        self.buf.push(&record);
    }

    fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let done = self.index.native.last;
        let completion = BufferCompletion {
            stream_id: 0,
            context: 1,
            cupti_completed_ns: done,
            unix_completed_ns: done,
        };
        self.w
            .write_buffer(
                completion,
                self.buf.as_bytes(),
                Some(Layout::cupti_13_0()),
                &self.index,
                self.stored,
            )
            .expect("write a buffer");
        self.chunks += 1;
        self.buf.clear();
        self.index = FrameIndex::default();
    }

    /// Close the dump (and write rank 0's window); the number of kernels.
    fn finish(mut self) -> u64 {
        self.flush();
        self.meta
            .set("session_open", false)
            .set("chunks_written", self.chunks);
        self.w.update_meta(&self.meta).expect("meta");
        self.w.finish().expect("finish");
        if let Some((first, last)) = self.window.filter(|w| w.0 <= w.1) {
            // A window of 2% of the run from 20% on: its span, as the monitor writes it.
            let a = first + (last - first) / 5;
            let b = a + (last - first) / 50;
            let window = serde_json::json!({"events": [
                {"kind": "kernel", "start_ns": a, "end_ns": a + 1000},
                {"kind": "kernel", "start_ns": b - 1000, "end_ns": b}],
                "extra_activities": [], "user_annotations": {}, "thread_resource_map": {},
                "start_ns": 0});
            std::fs::write(self.dir.join("window-0.json"), window.to_string()).expect("window");
            let file =
                std::fs::File::create(self.dir.join("window-0.trace.json.gz")).expect("trace");
            let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
            gz.write_all(b"{\"traceEvents\": []}").expect("trace");
            gz.finish().expect("trace");
        }
        self.kernels
    }
}

/// A cheap deterministic scramble.
fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}
