//! A synthetic training job on many ranks, as CUPTI would have recorded it: per
//! rank, a step of compute launches (200 kernel functions, Zipf-like popularity,
//! 1-3 launch configurations each with a lognormal median duration, 3% jitter, 1-3%
//! gaps) on one stream, an NCCL all-reduce on a second stream overlapping the step's
//! second half, a copy and a memset per step; records in completion order, packed
//! into 4 MiB buffers (CUPTI 13.0 layout). All ranks start together; in each minute
//! one planted rank runs its compute kernels `slow` times slower.

use cupmon_records::{ActivityKind, KernelRecord, MemcpyRecord, MemsetRecord, Record};

use crate::rng::Rng;

/// 2026-12-01T02:00:00Z.
pub const T0: u64 = 1_796_090_400_000_000_000;
const MINUTE: u64 = 60_000_000_000;
const COMPUTE_STREAM: u32 = 7;
const NCCL_STREAM: u32 = 13;
/// Activity buffer size: records per chunk are what fits.
pub const BUFFER: usize = 4 << 20;

/// The job's shape.
#[derive(Debug, Clone)]
pub struct Fleet {
    pub ranks: u32,
    pub ranks_per_host: u32,
    /// Compute and NCCL kernels per rank.
    pub kernels_per_rank: u64,
    /// How long each rank runs; the kernels' durations are scaled to fill it.
    pub seconds: f64,
    /// Compute kernels of the planted rank take this many times longer.
    pub slow: f64,
    pub seed: u64,
}

impl Fleet {
    /// The rank planted slow in minute `m` (counted from [`T0`]).
    pub fn planted(&self, minute: u64) -> u32 {
        ((minute * 5 + 3) % u64::from(self.ranks)) as u32
    }

    pub fn minutes(&self) -> u64 {
        (self.seconds / 60.0).ceil() as u64
    }
}

/// A kernel function: its name pointer, name and launch configurations (grid,
/// block, median duration relative to the step's mean).
#[derive(Debug, Clone)]
pub struct Function {
    pub ptr: u64,
    pub name: String,
    nccl: bool,
    registers: u16,
    configs: Vec<([i32; 3], [i32; 3], f64)>,
}

/// The job's kernel functions (the same on every rank), NCCL ones first.
pub fn functions(seed: u64) -> Vec<Function> {
    let mut rng = Rng::new(seed ^ 0xF00D);
    let ops = [
        "add",
        "mul",
        "gelu",
        "layer_norm",
        "softmax",
        "dropout",
        "copy",
        "sum",
        "gemm",
    ];
    let types = ["float", "c10::BFloat16", "c10::Half"];
    (0..208)
        .map(|i| {
            let nccl = i < 8;
            let name = if nccl {
                // NCCL 2.19+ names: copying collectives carry no type.
                let op = [
                    "AllReduce_Sum_bf16",
                    "AllGather",
                    "ReduceScatter_Sum_bf16",
                    "Broadcast",
                ][i % 4];
                format!("ncclDevKernel_{op}_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
            } else {
                format!(
                    "void at::native::{}_kernel_{i}<{}, {}>(at::TensorIteratorBase&, int, float)",
                    rng.pick(&ops),
                    rng.pick(&types),
                    4 << rng.below(3)
                )
            };
            let configs = (0..1 + rng.below(3))
                .map(|_| {
                    let grid = [1 << rng.below(14), *rng.pick(&[1, 1, 2, 8]), 1];
                    let block = *rng.pick(&[[128, 1, 1], [256, 1, 1], [512, 1, 1], [32, 4, 1]]);
                    (grid, block, (1.1 * rng.normal()).exp())
                })
                .collect();
            Function {
                ptr: 0x7FBB_0000_0000 + 0x40 * i as u64,
                name,
                nccl,
                registers: *rng.pick(&[32, 40, 64, 96, 128, 255]),
                configs,
            }
        })
        .collect()
}

/// One rank's records, a buffer at a time.
#[derive(Debug)]
pub struct RankStream {
    fleet: Fleet,
    rank: u32,
    rng: Rng,
    functions: Vec<Function>,
    /// The step: (function, config) of each compute launch.
    program: Vec<(usize, usize)>,
    /// ns of a relative duration of 1.
    unit: f64,
    clock: u64,
    made: u64,
    correlation: u32,
    grid_id: i64,
    pending: Vec<Record>,
}

impl RankStream {
    pub fn new(fleet: &Fleet, rank: u32) -> Self {
        let functions = functions(fleet.seed);
        let mut rng = Rng::new(fleet.seed.wrapping_mul(1000).wrapping_add(u64::from(rank)));
        let mut plan_rng = Rng::new(fleet.seed);
        let compute = functions.len() - 8;
        let program: Vec<(usize, usize)> = (0..500)
            .map(|_| {
                let f = 8 + ((compute as f64).powf(plan_rng.unit()) as usize).min(compute - 1);
                (
                    f,
                    plan_rng.below(functions[f].configs.len() as u64) as usize,
                )
            })
            .collect();
        let mean: f64 = program
            .iter()
            .map(|&(f, c)| functions[f].configs[c].2)
            .sum::<f64>()
            / program.len() as f64;
        // 500 compute launches (duration unit * w, then a gap of 0.02 * unit on
        // average) and 1 all-reduce per step: kernels_per_rank kernels in `seconds`.
        let per_launch = fleet.seconds * 1e9 / fleet.kernels_per_rank as f64 * 501.0 / 500.0;
        Self {
            unit: per_launch / (mean + 0.02),
            clock: T0 + rng.below(1_000_000),
            rng,
            functions,
            program,
            fleet: fleet.clone(),
            rank,
            made: 0,
            correlation: 1000,
            grid_id: 1,
            pending: Vec::new(),
        }
    }

    /// The next buffer's records (completion order), `None` at the end.
    pub fn next_chunk(&mut self) -> Option<Vec<Record>> {
        while self.pending.len() < BUFFER / 216 && self.made < self.fleet.kernels_per_rank {
            self.step();
        }
        if self.pending.is_empty() {
            return None;
        }
        let n = self.pending.len().min(BUFFER / 216);
        Some(self.pending.drain(..n).collect())
    }

    fn step(&mut self) {
        let mut step = Vec::with_capacity(self.program.len() + 3);
        let step_start = self.clock;
        let mut nccl_at = None;
        self.correlation += 2;
        step.push(memcpy(self.clock, self.correlation));
        for p in 0..self.program.len() {
            if self.made >= self.fleet.kernels_per_rank {
                break;
            }
            if p == self.program.len() / 2 {
                nccl_at = Some(self.clock);
            }
            let (f, c) = self.program[p];
            let slow = if self.fleet.planted((self.clock - T0) / MINUTE) == self.rank {
                self.fleet.slow
            } else {
                1.0
            };
            let d = self.functions[f].configs[c].2
                * self.unit
                * slow
                * (1.0 + 0.03 * self.rng.normal());
            let gap = (0.02 * self.unit * (0.5 + self.rng.unit())) as u64;
            let start = self.clock + gap.max(500);
            let end = start + (d as u64).max(1_000);
            step.push(self.kernel(f, c, COMPUTE_STREAM, start, end));
            self.clock = end;
        }
        if let Some(at) = nccl_at {
            // An all-reduce over the step's second half, on its own stream.
            let f = self.rng.below(8) as usize;
            let d = (self.clock - at) as f64 * (0.6 + 0.2 * self.rng.unit());
            step.push(self.kernel(f, 0, NCCL_STREAM, at + 2_000, at + 2_000 + d as u64));
        }
        self.correlation += 1;
        step.push(memset(step_start + 1_500, self.correlation));
        step.sort_by_key(|r| r.span().map_or(0, |s| s.1));
        self.pending.extend(step);
    }

    fn kernel(&mut self, f: usize, c: usize, stream: u32, start: u64, end: u64) -> Record {
        let func = &self.functions[f];
        let (grid, block, _) = func.configs[c];
        self.correlation += 1 + self.rng.below(4) as u32;
        self.made += 1;
        self.grid_id += 1;
        Record::Kernel(KernelRecord {
            kind: ActivityKind::CONCURRENT_KERNEL,
            registers_per_thread: func.registers,
            start,
            end,
            completed: end,
            device_id: self.rank % self.fleet.ranks_per_host,
            context_id: 1,
            stream_id: stream,
            grid_x: grid[0],
            grid_y: grid[1],
            grid_z: grid[2],
            block_x: block[0],
            block_y: block[1],
            block_z: block[2],
            static_shared_memory: if func.nccl { 0 } else { 4096 },
            correlation_id: self.correlation,
            grid_id: self.grid_id,
            name_ptr: func.ptr,
            channel_id: u32::from(stream == NCCL_STREAM),
            channel_type: 1,
            ..KernelRecord::default()
        })
    }
}

fn memcpy(at: u64, correlation: u32) -> Record {
    Record::Memcpy(MemcpyRecord {
        kind: ActivityKind::MEMCPY,
        copy_kind: 1,
        src_kind: 2,
        dst_kind: 3,
        flags: 1,
        bytes: 1 << 20,
        start: at,
        end: at + 60_000,
        context_id: 1,
        stream_id: COMPUTE_STREAM,
        correlation_id: correlation,
        channel_type: 2,
        ..MemcpyRecord::default()
    })
}

fn memset(at: u64, correlation: u32) -> Record {
    Record::Memset(MemsetRecord {
        kind: ActivityKind::MEMSET,
        bytes: 4096,
        start: at,
        end: at + 1_200,
        context_id: 1,
        stream_id: COMPUTE_STREAM,
        correlation_id: correlation,
        memory_kind: 3,
        channel_type: 1,
        ..MemsetRecord::default()
    })
}
