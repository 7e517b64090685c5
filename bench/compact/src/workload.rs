//! The buffers the benchmark compresses: the real fixtures, a synthetic training job and
//! an empty-kernel burst, packed into activity buffers as CUPTI fills them.

use std::path::Path;

use cupmon_records::{
    ActivityKind, Dump, KernelRecord, Layout, MemcpyRecord, MemsetRecord, Record, RecordIter,
    RecordWriter,
};

use crate::rng::Rng;

/// Activity buffers of one workload, and what they hold.
#[derive(Debug)]
pub struct Workload {
    pub name: String,
    pub layout: Layout,
    pub chunks: Vec<Vec<u8>>,
    pub records: u64,
    pub kernels: u64,
}

impl Workload {
    fn new(name: String, layout: Layout, chunks: Vec<Vec<u8>>) -> Self {
        let (mut records, mut kernels) = (0, 0);
        for c in &chunks {
            for r in RecordIter::new(c, layout) {
                records += 1;
                kernels += u64::from(matches!(r, Ok(Record::Kernel(_))));
            }
        }
        Self {
            name,
            layout,
            chunks,
            records,
            kernels,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.chunks.iter().map(|c| c.len() as u64).sum()
    }
}

/// Every chunk of the fixture dumps under `dir` (one workload each).
pub fn fixtures(dir: &Path) -> Vec<Workload> {
    ["cuda_workload", "torch_mlp"]
        .iter()
        .map(|name| {
            let dump = Dump::open(dir.join(name)).expect("fixture dump");
            let mut reader = dump.chunks().expect("raw buffers");
            let mut chunks = Vec::new();
            while let Some(c) = reader.next_chunk().expect("chunk") {
                chunks.push(c.data.to_vec());
            }
            Workload::new(
                format!("fixture {name}"),
                dump.layout().expect("layout"),
                chunks,
            )
        })
        .collect()
}

/// Records packed into buffers of `buffer` bytes, a new buffer when the next does not fit.
struct Packer {
    writer: RecordWriter,
    buffer: usize,
    chunks: Vec<Vec<u8>>,
}

impl Packer {
    fn new(layout: Layout, buffer: usize) -> Self {
        Self {
            writer: RecordWriter::with_capacity(layout, buffer),
            buffer,
            chunks: Vec::new(),
        }
    }

    fn push(&mut self, r: &Record) {
        let size = cupmon_records::encoded_size(r, self.writer.layout());
        if self.writer.len() + size > self.buffer {
            self.chunks.push(self.writer.as_bytes().to_vec());
            self.writer.clear();
        }
        self.writer.push(r);
    }

    fn finish(mut self) -> Vec<Vec<u8>> {
        if !self.writer.is_empty() {
            self.chunks.push(self.writer.as_bytes().to_vec());
        }
        self.chunks
    }
}

/// A kernel function and what its launches share.
struct Kernel {
    template: KernelRecord,
    /// Launch configurations: grid, block, dynamic shared memory, and the median
    /// duration (ns) of a launch with it (the same work each time).
    configs: Vec<([i32; 3], [i32; 3], i32, f64)>,
}

/// One launch of the training step's program.
struct Launch {
    kernel: usize,
    config: usize,
    /// Launched as node `graph_node_id` of the step's CUDA graph.
    graph_node: Option<u64>,
    /// A memcpy or memset issued before the kernel.
    copy: Option<u64>,
}

const T0: u64 = 1_795_979_259_000_000_000;

fn kernel_functions(rng: &mut Rng, names: usize, streams: &[u32]) -> Vec<Kernel> {
    (0..names)
        .map(|i| {
            // Pointers into two libraries' name tables, as the fixtures' are.
            let name_ptr = if i % 3 == 0 {
                0x3F00_0000 + 16 * rng.below(1 << 22)
            } else {
                0x7FBB_0000_0000 + 16 * rng.below(1 << 28)
            };
            // The first few are NCCL-like kernels on the communication streams.
            let stream = if i < 8 && streams.len() > 1 {
                streams[1 + i % (streams.len() - 1)]
            } else {
                streams[0]
            };
            let channel = streams.iter().position(|&s| s == stream).unwrap_or(0) as u32;
            let template = KernelRecord {
                kind: ActivityKind::CONCURRENT_KERNEL,
                cache_config: *rng.pick(&[0x00, 0x11, 0x22]),
                shared_memory_config: 1,
                registers_per_thread: *rng.pick(&[16, 32, 40, 64, 72, 96, 128, 168, 255]),
                partitioned_global_cache_requested: 1,
                partitioned_global_cache_executed: 1,
                device_id: 0,
                context_id: 1,
                stream_id: stream,
                static_shared_memory: *rng.pick(&[0, 0, 1024, 4096, 16384, 49152]),
                local_memory_per_thread: *rng.pick(&[0, 0, 0, 16, 64]),
                local_memory_total: 0x5E00_0000,
                name_ptr,
                shared_memory_executed: *rng.pick(&[0, 32768, 65536, 102400, 233472]),
                channel_id: channel,
                channel_type: 1,
                max_potential_cluster_size: *rng.pick(&[0, 8, 16]),
                max_active_clusters: *rng.pick(&[0, 66, 132]),
                local_memory_total_v2: 0x5E00_0000,
                ..KernelRecord::default()
            };
            let configs = (0..1 + rng.below(3))
                .map(|_| {
                    let gx = 1 << rng.below(16);
                    let grid = [gx, *rng.pick(&[1, 1, 1, 2, 8]), 1];
                    let block = *rng.pick(&[
                        [128, 1, 1],
                        [256, 1, 1],
                        [512, 1, 1],
                        [32, 4, 1],
                        [1024, 1, 1],
                    ]);
                    let duration =
                        (20_000.0 * (1.1 * rng.normal()).exp()).clamp(5_000.0, 2_000_000.0);
                    let duration = if i < 8 {
                        (duration * 10.0).min(2_000_000.0)
                    } else {
                        duration
                    };
                    (grid, block, *rng.pick(&[0, 0, 0, 16384, 82944]), duration)
                })
                .collect();
            Kernel { template, configs }
        })
        .collect()
}

/// A training job: a step of `step_len` launches of `names` kernel functions (a few
/// popular ones most of the time), each with one of its function's 1-3 launch
/// configurations, whose median duration is lognormal (5 us - 2 ms), repeated until
/// `kernels` kernels; back to back on `streams` streams with 1-3 us gaps, durations
/// jittered 3% per run, correlation ids in steps of 1-6, grid ids one per launch, a
/// CUDA graph of 30 launches in each step, a memcpy or memset before 1% of launches.
/// Records are written in order of completion, into 4 MiB buffers (CUPTI 13.0).
pub fn training(kernels: u64, names: usize, streams: usize, step_len: usize) -> Workload {
    let layout = Layout::cupti_13_0();
    let mut rng = Rng::new(42);
    let stream_ids: Vec<u32> = (0..streams.max(1) as u32).map(|i| 7 + 6 * i).collect();
    let functions = kernel_functions(&mut rng, names, &stream_ids);
    let graph_at = step_len / 2;
    let program: Vec<Launch> = (0..step_len)
        .map(|p| {
            // Zipf-like popularity: low indices far more often.
            let kernel = ((names as f64).powf(rng.unit()) as usize).min(names - 1);
            let in_graph = (graph_at..graph_at + 30).contains(&p);
            Launch {
                kernel,
                config: rng.below(functions[kernel].configs.len() as u64) as usize,
                graph_node: in_graph.then_some((1 << 32) | p as u64),
                copy: (rng.below(100) == 0).then(|| 4096 << rng.below(10)),
            }
        })
        .collect();
    let mut packer = Packer::new(layout, 4 << 20);
    let mut clock: Vec<u64> = vec![T0; stream_ids.len()];
    let (mut correlation, mut grid_id, mut made) = (1000u32, 1i64, 0u64);
    let mut step: Vec<Record> = Vec::with_capacity(step_len + step_len / 50);
    while made < kernels {
        step.clear();
        let mut graph_correlation = None;
        for launch in &program {
            let f = &functions[launch.kernel];
            let mut k = f.template.clone();
            let s = stream_ids
                .iter()
                .position(|&id| id == k.stream_id)
                .unwrap_or(0);
            // Other streams start their kernels when the compute stream reaches them.
            let mut at = clock[s].max(clock[0]);
            if let Some(bytes) = launch.copy {
                correlation += 1 + rng.below(3) as u32;
                let start = at + 2_000;
                let end = start + 1_000 + bytes / 20; // ~20 GB/s
                step.push(copy_record(
                    bytes,
                    start,
                    end,
                    stream_ids[0],
                    correlation,
                    &mut rng,
                ));
                at = end;
            }
            match launch.graph_node {
                Some(node) => {
                    let id = *graph_correlation.get_or_insert_with(|| {
                        correlation += 1;
                        correlation
                    });
                    (k.correlation_id, k.graph_id, k.graph_node_id) = (id, 1, node);
                }
                None => {
                    correlation += 1 + rng.below(6) as u32;
                    k.correlation_id = correlation;
                }
            }
            let (grid, block, dynamic, duration) = f.configs[launch.config];
            (k.grid_x, k.grid_y, k.grid_z) = (grid[0], grid[1], grid[2]);
            (k.block_x, k.block_y, k.block_z) = (block[0], block[1], block[2]);
            k.dynamic_shared_memory = dynamic;
            k.start = at + 1_000 + rng.exp(1_000.0) as u64;
            k.end = k.start + (duration * (1.0 + 0.03 * rng.normal())).max(1_000.0) as u64;
            k.completed = k.end;
            k.grid_id = grid_id;
            grid_id += 1;
            clock[s] = k.end;
            step.push(Record::Kernel(k));
            made += 1;
        }
        // CUPTI writes a record when the work completes.
        step.sort_by_key(|r| r.span().map_or(0, |s| s.1));
        for r in &step {
            packer.push(r);
        }
    }
    let name =
        format!("training ({names} kernels, {streams} streams, step of {step_len} launches)");
    Workload::new(name, layout, packer.finish())
}

fn copy_record(bytes: u64, start: u64, end: u64, stream: u32, corr: u32, rng: &mut Rng) -> Record {
    if rng.below(2) == 0 {
        Record::Memcpy(MemcpyRecord {
            kind: ActivityKind::MEMCPY,
            copy_kind: 1,
            src_kind: 2,
            dst_kind: 3,
            flags: 1,
            bytes,
            start,
            end,
            context_id: 1,
            stream_id: stream,
            correlation_id: corr,
            channel_id: 8,
            channel_type: 2,
            copy_count: 1,
            ..MemcpyRecord::default()
        })
    } else {
        Record::Memset(MemsetRecord {
            kind: ActivityKind::MEMSET,
            bytes,
            start,
            end,
            context_id: 1,
            stream_id: stream,
            correlation_id: corr,
            flags: 1,
            memory_kind: 3,
            channel_type: 1,
            ..MemsetRecord::default()
        })
    }
}

/// The same empty kernel `count` times, 2 us apart (1.4-1.7 us each), one stream.
pub fn burst(count: u64) -> Workload {
    let layout = Layout::cupti_13_0();
    let mut rng = Rng::new(7);
    let functions = kernel_functions(&mut rng, 1, &[7]);
    let mut k = functions[0].template.clone();
    (
        k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
    ) = (1, 1, 1, 1, 1, 1);
    let mut packer = Packer::new(layout, 4 << 20);
    for i in 0..count {
        k.start = T0 + 2_000 * i + rng.below(100);
        k.end = k.start + 1_400 + rng.below(300);
        k.completed = k.end;
        k.correlation_id = 1000 + i as u32;
        k.grid_id = 1 + i as i64;
        packer.push(&Record::Kernel(k.clone()));
    }
    Workload::new(
        format!("empty-kernel burst ({count} launches)"),
        layout,
        packer.finish(),
    )
}
