//! `make-dump OUT RAW_MIB [SEGMENT_MIB] [--digests]`: a segmented dump (what `cupmon run`
//! writes by default) of a synthetic training job, RAW_MIB MiB of CUPTI 13.0 activity
//! buffers before compression, written through `DumpWriter::create_segmented` as the
//! monitor's worker writes it (4 MiB buffers, each with its time index). With
//! `--digests`, each segment's digest too, as the monitor writes them (without, readers
//! walk the records: what the slice and report benches time).
//!
//! The job: one GPU, 2,000 kernels/s (50-750 us kernels, 100 us apart, about 80% busy);
//! steps of 1,000 launches, each under a user annotation (one CUSTOM1 external
//! correlation per launch, one annotation per step), a 4 MiB host-to-device copy and
//! 20 ms idle between steps; 50 kernel functions. A dump twice as large covers twice
//! the time. Starts at 2026-12-01T14:00:00Z.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cupmon_records::dump::{BufferCompletion, FrameIndex, SegmentPolicy};
use cupmon_records::{
    ActivityKind, DumpWriter, ExternalCorrelationRecord, KernelRecord, Layout, MemcpyRecord,
    MetaFile, Record, RecordWriter,
};

const T0: u64 = 1_796_133_600_000_000_000;
const BUFFER: usize = 4 << 20;
const STEP: u64 = 1000;
const FUNCTIONS: u64 = 50;

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let digests = args.iter().any(|a| a == "--digests");
    args.retain(|a| a != "--digests");
    if args.len() < 3 {
        eprintln!("usage: make-dump OUT RAW_MIB [SEGMENT_MIB (default 8)] [--digests]");
        std::process::exit(2);
    }
    let out = PathBuf::from(&args[1]);
    let raw_target: u64 = args[2].parse::<u64>().expect("RAW_MIB") << 20;
    let segment_mib: u64 = args.get(3).map_or(8, |s| s.parse().expect("SEGMENT_MIB"));
    let started = Instant::now();
    let layout = Layout::cupti_13_0();
    let mut meta = MetaFile::new();
    meta.set("cupti_version", 130_000)
        .set("buffer_size", BUFFER as u64)
        .set("session_open", true)
        .set("dropped_records", 0)
        .set("chunks_written", 0);
    let policy = SegmentPolicy {
        segment_size: segment_mib << 20,
        segment_period: Duration::from_secs(86_400),
        keep: u64::MAX / 4,
        keep_for: None,
    };
    let mut w = DumpWriter::create_segmented(&out, &meta, policy).expect("create the dump");
    for f in 0..FUNCTIONS {
        let name = format!("kernel{f}");
        w.add_kernel_name(
            0x7f00_0000 + f * 0x40,
            &format!("_Z{}{name}Pfi", name.len()),
        )
        .expect("kernel name");
    }
    let mut job = Job::default();
    let mut buf = RecordWriter::with_capacity(layout, BUFFER);
    let mut index = FrameIndex::default();
    let (mut raw, mut chunks) = (0u64, 0u64);
    while raw < raw_target {
        for record in job.next_records(&mut w) {
            if buf.len() + 256 > BUFFER {
                flush(&mut w, &mut buf, &mut index, layout, &mut raw, &mut chunks);
            }
            index.add(&record);
            buf.push(&record);
            if digests {
                w.digest_record(&record);
            }
        }
    }
    flush(&mut w, &mut buf, &mut index, layout, &mut raw, &mut chunks);
    meta.set("session_open", false)
        .set("chunks_written", chunks);
    w.update_meta(&meta).expect("meta");
    w.finish().expect("finish");
    let disk: u64 = std::fs::read_dir(out.join("segments"))
        .expect("segments")
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    println!(
        "{}: {} MiB raw in {chunks} buffers, {} kernels over {:.1} s of recording, {:.1} MiB \
         of segments ({:.2} B/kernel), written in {:.1} s",
        out.display(),
        raw >> 20,
        job.kernels,
        (job.t - T0) as f64 / 1e9,
        disk as f64 / f64::from(1u32 << 20),
        disk as f64 / job.kernels as f64,
        started.elapsed().as_secs_f64()
    );
}

fn flush(
    w: &mut DumpWriter,
    buf: &mut RecordWriter,
    index: &mut FrameIndex,
    layout: Layout,
    raw: &mut u64,
    chunks: &mut u64,
) {
    if buf.is_empty() {
        return;
    }
    let done = index.native.last;
    let completion = BufferCompletion {
        stream_id: 0,
        context: 1,
        cupti_completed_ns: done,
        unix_completed_ns: done,
    };
    w.write_buffer(completion, buf.as_bytes(), Some(layout), index, false)
        .expect("write a buffer");
    *raw += buf.len() as u64;
    *chunks += 1;
    buf.clear();
    *index = FrameIndex::default();
}

#[derive(Debug, Default)]
struct Job {
    kernels: u64,
    /// Where the stream is: the next kernel starts here.
    t: u64,
    correlation: u32,
}

impl Job {
    /// One step: its annotation, its copy, its launches.
    fn next_records(&mut self, w: &mut DumpWriter) -> Vec<Record> {
        if self.t == 0 {
            self.t = T0;
        }
        let step = self.kernels / STEP;
        let external_id = 1_000_000 + step;
        w.add_user_annotation(external_id, &format!("step {step}"))
            .expect("annotation");
        let mut out = Vec::with_capacity(2 * STEP as usize + 1);
        self.correlation += 1;
        out.push(Record::Memcpy(MemcpyRecord {
            kind: ActivityKind::MEMCPY,
            copy_kind: 1,
            src_kind: 2,
            dst_kind: 3,
            bytes: 4 << 20,
            start: self.t,
            end: self.t + 200_000,
            device_id: 0,
            context_id: 1,
            stream_id: 7,
            correlation_id: self.correlation,
            ..MemcpyRecord::default()
        }));
        self.t += 300_000;
        for _ in 0..STEP {
            let i = self.kernels;
            let f = (i * 7 + i / 13) % FUNCTIONS;
            let dur = 50_000 + mix(i) % 700_000;
            self.correlation += 1;
            out.push(Record::ExternalCorrelation(ExternalCorrelationRecord {
                kind: ActivityKind::EXTERNAL_CORRELATION,
                external_kind: 4,
                external_id,
                correlation_id: self.correlation,
            }));
            out.push(Record::Kernel(KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                start: self.t,
                end: self.t + dur,
                completed: self.t + dur,
                device_id: 0,
                context_id: 1,
                stream_id: 7,
                grid_x: 128 << (f % 4),
                grid_y: 1,
                grid_z: 1,
                block_x: 256,
                block_y: 1,
                block_z: 1,
                registers_per_thread: 32,
                correlation_id: self.correlation,
                grid_id: i as i64,
                name_ptr: 0x7f00_0000 + f * 0x40,
                ..KernelRecord::default()
            }));
            self.t += dur + 100_000;
            self.kernels += 1;
        }
        self.t += 20_000_000;
        out
    }
}

/// A cheap deterministic scramble.
fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}
