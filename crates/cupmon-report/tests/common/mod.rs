//! Synthetic runs for the tests: segmented dumps of a data-parallel job, one per rank,
//! with NCCL all-reduces that end on every rank when the slowest rank reaches them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cupmon_records::dump::{BufferCompletion, FrameIndex, SegmentPolicy};
use cupmon_records::{
    ActivityKind, DumpWriter, KernelRecord, Layout, MemcpyRecord, MetaFile, Record, RecordWriter,
};

pub const T0: u64 = 1_796_133_600_000_000_000;
pub const S: u64 = 1_000_000_000;
pub const MS: u64 = 1_000_000;
pub const COMPUTE_PTR: u64 = 0x1000;
pub const NCCL_PTR: u64 = 0x2000;
pub const NCCL_NAME: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/h200-cupti13.0")
        .join(name)
}

pub fn kernel(device: u32, stream: u32, start: u64, end: u64, ptr: u64, corr: u32) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        start,
        end,
        completed: end,
        device_id: device,
        stream_id: stream,
        correlation_id: corr,
        grid_x: 64,
        grid_y: 1,
        grid_z: 1,
        block_x: 128,
        block_y: 1,
        block_z: 1,
        name_ptr: ptr,
        ..KernelRecord::default()
    })
}

/// The job: `steps` steps of `step_ns`, from T0. A step: a 1 KiB copy, one compute
/// kernel of 60% of the step (`slow` times that on `slow_rank` during `slow_steps`),
/// then an all-reduce that ends for everybody 10% of a step after the last rank's
/// compute ends. Returns each rank's records.
pub fn job(
    ranks: u32,
    steps: u64,
    step_ns: u64,
    slow_rank: u32,
    slow_steps: std::ops::Range<u64>,
    slow: f64,
) -> Vec<Vec<Record>> {
    let mut out = vec![Vec::new(); ranks as usize];
    let mut t = T0;
    let mut corr = 0;
    for step in 0..steps {
        let mut arrive = Vec::new();
        for r in 0..ranks {
            let mut compute = step_ns * 6 / 10;
            if r == slow_rank && slow_steps.contains(&step) {
                compute = (compute as f64 * slow) as u64;
            }
            corr += 1;
            out[r as usize].push(Record::Memcpy(MemcpyRecord {
                kind: ActivityKind::MEMCPY,
                copy_kind: 1,
                src_kind: 2,
                dst_kind: 3,
                bytes: 1024,
                start: t,
                end: t + step_ns / 100,
                device_id: r,
                stream_id: 9,
                correlation_id: corr,
                ..MemcpyRecord::default()
            }));
            corr += 1;
            let k = t + step_ns / 50;
            out[r as usize].push(kernel(r, 7, k, k + compute, COMPUTE_PTR, corr));
            arrive.push(k + compute);
        }
        let done = arrive.iter().max().copied().unwrap_or(t) + step_ns / 10;
        for r in 0..ranks {
            corr += 1;
            out[r as usize].push(kernel(r, 20, arrive[r as usize], done, NCCL_PTR, corr));
        }
        t = t.max(done).max(t + step_ns);
    }
    out
}

/// Write `records` as rank `rank`'s segmented dump under `run` (buffers of `per_buffer`
/// records), with the segments' digests as cupmon's monitor writes them; its directory.
pub fn write_rank(
    run: &Path,
    rank: u32,
    ranks: u32,
    records: &[Record],
    per_buffer: usize,
) -> PathBuf {
    write_rank_in(run, rank, ranks, records, per_buffer, 1 << 20)
}

/// [`write_rank`] with segments rolled at `segment_size` bytes.
pub fn write_rank_in(
    run: &Path,
    rank: u32,
    ranks: u32,
    records: &[Record],
    per_buffer: usize,
    segment_size: u64,
) -> PathBuf {
    let dir = run.join(format!("rank{rank}-{}-20261201T140000Z", 100 + rank));
    let mut meta = MetaFile::new();
    meta.set("cupti_version", 130_000)
        .set("buffer_size", 1u64 << 22)
        .set("pid", 100 + rank)
        .set("rank", rank.to_string())
        .set(
            "distributedInfo",
            serde_json::json!({"rank": rank, "world_size": ranks}),
        )
        .set("command", vec!["python", "train.py"])
        .set("host", "node1")
        .set("session_open", false)
        .set("dropped_records", 0);
    let policy = SegmentPolicy {
        segment_size,
        segment_period: Duration::from_secs(86_400),
        keep: u64::MAX / 4,
        keep_for: None,
    };
    let layout = Layout::cupti_13_0();
    let mut w = DumpWriter::create_segmented(&dir, &meta, policy).unwrap();
    w.add_kernel_name(COMPUTE_PTR, "_Z7computePfi").unwrap();
    w.add_kernel_name(
        NCCL_PTR,
        &format!(
            "_Z{}{NCCL_NAME}24ncclDevKernelArgsStorageILm4096EE",
            NCCL_NAME.len()
        ),
    )
    .unwrap();
    for chunk in records.chunks(per_buffer.max(1)) {
        let mut rw = RecordWriter::new(layout);
        let mut index = FrameIndex::default();
        for r in chunk {
            rw.push(r);
            index.add(r);
            w.digest_record(r);
        }
        let done = index.native.last.max(T0);
        let completion = BufferCompletion {
            stream_id: 0,
            context: 0,
            cupti_completed_ns: done,
            unix_completed_ns: done,
        };
        w.write_buffer(completion, &rw.into_bytes(), Some(layout), &index, false)
            .unwrap();
    }
    w.update_meta(&meta).unwrap();
    w.finish().unwrap();
    dir
}

/// A whole run under `run`; the dump directories by rank.
pub fn write_run(run: &Path, job: &[Vec<Record>], per_buffer: usize) -> Vec<PathBuf> {
    let ranks = job.len() as u32;
    (0..ranks)
        .map(|r| write_rank(run, r, ranks, &job[r as usize], per_buffer))
        .collect()
}
