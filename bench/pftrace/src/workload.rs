//! A GPU-shaped event stream, generated on the fly (nothing is kept, so the
//! measured memory is the writer's): one CPU thread launching kernels onto 8
//! streams of one GPU, ~200 distinct kernel names (C++ template names of
//! 40-220 bytes), args as cupmon writes them, an `ac2g` flow on 9 in 10.

/// Base time: 2025-11-24, ns since the epoch.
pub const T0: u64 = 1_764_000_000_000_000_000;
pub const STREAMS: u64 = 8;
pub const CPU_PID: i32 = 4242;
pub const CPU_TID: i64 = 4243;

/// A launch and the kernel it launched.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub correlation: u64,
    pub has_flow: bool,
    pub launch_ts: u64,
    pub launch_dur: u64,
    pub cbid: i64,
    pub kernel: usize,
    pub stream: u64,
    pub kernel_ts: u64,
    pub kernel_dur: u64,
}

pub fn kernel_names() -> Vec<String> {
    let ops = [
        "elementwise_kernel",
        "reduce_kernel",
        "vectorized_elementwise_kernel",
        "sgemm_128x64_nn",
        "softmax_warp_forward",
        "layer_norm_kernel",
        "index_elementwise_kernel",
        "cat_batched_copy",
    ];
    let fns = [
        "FillFunctor<float>",
        "AddFunctor<c10::Half>",
        "MulFunctor<float>",
        "GeluCUDAKernelImpl",
        "CUDAFunctor_add<float>",
        "ReduceOp<float, MeanOps<float, float>, unsigned int, float, 4>",
    ];
    (0..200)
        .map(|i| {
            let op = ops[i % ops.len()];
            let f = fns[(i / ops.len()) % fns.len()];
            match i % 3 {
                0 => format!("ampere_{op}_{i}"),
                1 => format!("void at::native::{op}<{}, at::native::{f}>(int, {i})", 128 << (i % 3)),
                _ => format!("void at::native::(anonymous namespace)::{op}<at::native::{f}, at::detail::Array<char*, {}>, {i}>(int, at::native::{f}, at::detail::Array<char*, {}>)", i % 5 + 1, i % 5 + 1),
            }
        })
        .collect()
}

/// Pairs in launch order; kernels of a stream never overlap.
#[derive(Debug)]
pub struct Workload {
    rng: u64,
    i: u64,
    pairs: u64,
    cpu_cursor: u64,
    stream_free: [u64; STREAMS as usize],
}

impl Workload {
    pub fn new(pairs: u64) -> Self {
        Self {
            rng: 0x9E37_79B9_7F4A_7C15,
            i: 0,
            pairs,
            cpu_cursor: T0,
            stream_free: [T0; STREAMS as usize],
        }
    }

    fn next_rand(&mut self) -> u64 {
        // xorshift64*: cheap next to the writers, deterministic.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

impl Iterator for Workload {
    type Item = Pair;
    fn next(&mut self) -> Option<Pair> {
        if self.i == self.pairs {
            return None;
        }
        self.i += 1;
        let r = self.next_rand();
        let launch_dur = 2_000 + r % 6_000;
        let launch_ts = self.cpu_cursor;
        self.cpu_cursor += launch_dur + 500 + (r >> 16) % 2_000;
        let stream = (r >> 24) % STREAMS;
        let kernel = ((r >> 32) % 200) as usize;
        let kernel_dur = 1_000 + (r >> 40) % 60_000;
        let free = &mut self.stream_free[stream as usize];
        let kernel_ts = (*free).max(launch_ts + launch_dur + 3_000);
        *free = kernel_ts + kernel_dur;
        Some(Pair {
            correlation: self.i,
            has_flow: !self.i.is_multiple_of(10),
            launch_ts,
            launch_dur,
            cbid: 211,
            kernel,
            stream,
            kernel_ts,
            kernel_dur,
        })
    }
}

/// The stream id cupmon shows for stream number `s` (CUPTI's: 7, then 13 on).
pub fn stream_id(s: u64) -> i64 {
    if s == 0 {
        7
    } else {
        12 + s as i64
    }
}
